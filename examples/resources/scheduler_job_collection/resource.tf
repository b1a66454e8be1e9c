resource "scheduler_job_collection" "ops" {
  name           = "ops"
  resource_group = "platform"
  sku            = "Standard"

  # Overrides the SKU's defaults (Standard: 50 jobs, every minute at most).
  quota {
    max_job_count      = 20
    max_job_occurrence = 10000
    max_recurrence {
      frequency = "Minute"
      interval  = 5
    }
  }

  tags = {
    team = "platform"
  }
}
