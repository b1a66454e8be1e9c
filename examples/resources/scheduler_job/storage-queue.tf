# Put a message on an Azure Storage queue every hour (Azurite locally: run the daemon with
# --storage-queue-endpoint http://127.0.0.1:10001/{account}). The consumer receives Azure
# Scheduler's StorageQueueMessage envelope with this message in it.
resource "scheduler_job" "hourly_report" {
  job_collection_id = scheduler_job_collection.ops.id
  name              = "hourly-report"

  action {
    type = "StorageQueue"
    queue_message {
      storage_account = "opsstorage"
      queue_name      = "reports"
      sas_token       = var.reports_queue_sas # a SAS allowing Add on the queue
      message         = jsonencode({ report = "hourly" })
    }
    retry_policy {
      retry_type     = "Fixed"
      retry_interval = "PT1M"
      retry_count    = 3
    }
  }

  recurrence {
    frequency = "Hour"
    interval  = 1
  }
}

variable "reports_queue_sas" {
  type      = string
  sensitive = true
}
