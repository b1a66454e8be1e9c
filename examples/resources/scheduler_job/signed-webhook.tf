# Every 15 minutes, a signed webhook the receiver verifies with a Standard Webhooks library
# (`webhook-id`, `webhook-timestamp`, `webhook-signature`): each attempt may take 10 seconds,
# and a failed one is retried after 30 s, 1 min, 2 min, 4 min, then every 5 minutes.
resource "scheduler_job" "sync" {
  job_collection_id = scheduler_job_collection.ops.id
  name              = "sync"

  action {
    type    = "Https"
    timeout = "PT10S"
    request {
      uri    = "https://hooks.example.com/sync"
      method = "POST"
      body   = jsonencode({ scope = "inventory" })
      signing {
        # "whsec_" + base64 of 24 to 64 random bytes (openssl rand -base64 32). Write-only: never
        # in the plan or the state. To rotate, set the new one here and the old one as
        # previous_secret_wo (requests then carry both signatures), bumping the versions.
        secret_wo         = var.webhook_secret
        secret_wo_version = 1
      }
    }
    retry_policy {
      retry_type         = "Exponential"
      retry_interval     = "PT30S"
      max_retry_interval = "PT5M"
      retry_count        = 8
    }
  }

  recurrence {
    frequency = "Minute"
    interval  = 15
  }
}

variable "webhook_secret" {
  type      = string
  sensitive = true
  ephemeral = true
}
