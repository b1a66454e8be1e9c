# Process the day's uploads on weekdays at 22:00 and 02:00 New York time (off-peak), until the
# end of the year. OAuth client credentials authenticate the call.
resource "scheduler_job" "off_peak_processing" {
  job_collection_id = scheduler_job_collection.ops.id
  name              = "off-peak-processing"
  start_time        = "2026-01-05T00:00:00"

  action {
    type = "Https"
    request {
      uri    = "https://batch.example.com/uploads/process"
      method = "POST"
      authentication {
        active_directory_oauth {
          tenant    = "contoso.onmicrosoft.com"
          audience  = "https://batch.example.com"
          client_id = "3f2b6c1e-8a5d-4b8e-9b61-2c7f0a9d4e11"
          secret    = var.batch_client_secret
        }
      }
    }
  }

  recurrence {
    frequency = "Week"
    end_time  = "2026-12-31"
    time_zone = "America/New_York"
    schedule {
      week_days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
      hours     = [2, 22]
      minutes   = [0]
    }
  }
}

variable "batch_client_secret" {
  type      = string
  sensitive = true
}
