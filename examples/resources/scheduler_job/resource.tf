resource "scheduler_job_collection" "ops" {
  name = "ops"
}

# Every night at 02:30 Berlin time, ask the API to purge old sessions; retry every 5 minutes,
# and page the on-call when it still fails.
resource "scheduler_job" "nightly_cleanup" {
  job_collection_id = scheduler_job_collection.ops.id
  name              = "nightly-cleanup"
  start_time        = "2026-01-01T02:30:00"

  action {
    type = "Https"
    request {
      uri    = "https://api.example.com/admin/sessions/purge"
      method = "POST"
      body   = jsonencode({ olderThanDays = 30 })
      headers = {
        "Content-Type" = "application/json"
      }
      authentication {
        basic {
          username = "scheduler"
          # Write-only (Terraform 1.11+, OpenTofu 1.11+): sent to the daemon, never stored in
          # the state. Bump password_wo_version to send a new password.
          password_wo         = var.cleanup_password
          password_wo_version = 1
        }
      }
    }
    retry_policy {
      retry_type     = "Fixed"
      retry_interval = "PT5M"
      retry_count    = 3
    }
    error_action {
      type = "Https"
      request {
        uri    = "https://oncall.example.com/hooks/scheduler"
        method = "POST"
        body   = "nightly-cleanup failed"
      }
    }
  }

  recurrence {
    frequency = "Day"
    time_zone = "Europe/Berlin"
  }
}

variable "cleanup_password" {
  type      = string
  sensitive = true
  ephemeral = true
}
