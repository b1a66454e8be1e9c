# Fetch the exchange rates every 15 minutes, on the quarter hour.
resource "scheduler_job" "fetch_rates" {
  job_collection_id = scheduler_job_collection.ops.id
  name              = "fetch-rates"
  start_time        = "2026-01-01T00:00:00Z"

  action {
    type = "Https"
    request {
      uri    = "https://api.example.com/rates/refresh"
      method = "POST"
    }
    retry_policy {
      retry_type = "None"
    }
  }

  recurrence {
    frequency = "Minute"
    interval  = 15
  }
}
