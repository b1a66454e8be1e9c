# Send the monthly report on the last Friday of every month at 16:00 London time, with a client
# certificate.
resource "scheduler_job" "monthly_report" {
  job_collection_id = scheduler_job_collection.ops.id
  name              = "monthly-report"
  start_time        = "2026-01-01T16:00:00"

  action {
    type = "Https"
    request {
      uri    = "https://reports.example.com/monthly/send"
      method = "POST"
      authentication {
        client_certificate {
          pfx      = var.reports_client_pfx # filebase64("reports-client.pfx")
          password = var.pfx_password
        }
      }
    }
  }

  recurrence {
    frequency = "Month"
    time_zone = "Europe/London"
    schedule {
      monthly_occurrences {
        day        = "Friday"
        occurrence = -1
      }
    }
  }
}

variable "reports_client_pfx" {
  type        = string
  sensitive   = true
  description = "The client certificate and its key, a base64 PKCS#12 file."
}

variable "pfx_password" {
  type      = string
  sensitive = true
}
