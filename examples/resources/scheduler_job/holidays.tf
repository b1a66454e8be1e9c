# The public holidays, kept once and shared by every job that must not run on them. A date is
# read in each job's own zone (its time_zone, else UTC).
locals {
  holidays = [
    "2026-12-24", "2026-12-25", "2026-12-26", "2026-12-31",
    "2027-01-01", "2027-04-02", "2027-04-05", "2027-05-01",
  ]
}

# Every working day at 06:00 Berlin: the payroll export. Skipped on holidays (a skipped day does
# not count toward count), spread over five minutes so that it does not start in the same
# millisecond as every other 06:00 job, never run twice at once, and after an outage each missed
# day is run in order.
resource "scheduler_job" "payroll_export" {
  job_collection_id = scheduler_job_collection.ops.id
  name              = "payroll-export"
  start_time        = "2026-12-01T06:00:00"
  overlap           = "Skip"

  action {
    type = "Https"
    request {
      uri    = "https://payroll.example.com/export"
      method = "POST"
    }
  }

  recurrence {
    frequency     = "Week"
    time_zone     = "Europe/Berlin"
    jitter        = "PT5M"
    exclude_dates = local.holidays
    schedule {
      week_days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
      hours     = [6]
      minutes   = [0]
    }
  }

  misfire {
    policy    = "RunAll"
    threshold = "PT10M"
  }
}

# The same holidays for the nightly report; it is paused during a migration and resumes by itself.
resource "scheduler_job" "nightly_report" {
  job_collection_id = scheduler_job_collection.ops.id
  name              = "nightly-report"
  start_time        = "2026-12-01T23:00:00"
  state             = "Disabled"
  resume_at         = "2026-12-07T08:00:00Z"
  note              = "paused during the warehouse migration (CHG-1234)"

  action {
    type = "Https"
    request {
      uri    = "https://reports.example.com/nightly"
      method = "POST"
    }
  }

  recurrence {
    frequency     = "Day"
    time_zone     = "Europe/Berlin"
    exclude_dates = local.holidays
  }
}

# What the payroll export does in the coming weeks, as the daemon will start it: the
# holidays left out and, with job_id, each run at its offset within the five minutes.
data "scheduler_occurrences" "payroll_export" {
  job_id     = scheduler_job.payroll_export.id
  start_time = scheduler_job.payroll_export.start_time
  limit      = 20
  recurrence {
    frequency     = "Week"
    time_zone     = "Europe/Berlin"
    jitter        = "PT5M"
    exclude_dates = local.holidays
    schedule {
      week_days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
      hours     = [6]
      minutes   = [0]
    }
  }
}

output "payroll_export_runs" {
  value = data.scheduler_occurrences.payroll_export.times
}
