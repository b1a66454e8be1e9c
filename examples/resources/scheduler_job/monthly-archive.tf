# On the 1st of every month at 03:00 UTC, archive last month's orders, 24 times (two years).
resource "scheduler_job" "monthly_archive" {
  job_collection_id = scheduler_job_collection.ops.id
  name              = "monthly-archive"
  start_time        = "2026-02-01T03:00:00Z"

  action {
    type = "Https"
    request {
      uri    = "https://api.example.com/orders/archive"
      method = "POST"
    }
  }

  recurrence {
    frequency = "Month"
    count     = 24
    schedule {
      month_days = [1]
    }
  }
}
