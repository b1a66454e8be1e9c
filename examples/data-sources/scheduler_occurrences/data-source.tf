# Preview the next 5 executions of a weekday schedule before applying it (no daemon needed).
data "scheduler_occurrences" "off_peak" {
  start_time = "2026-01-05T00:00:00"
  recurrence {
    frequency = "Week"
    time_zone = "America/New_York"
    schedule {
      week_days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
      hours     = [2, 22]
      minutes   = [0]
    }
  }
  limit = 5
}

output "off_peak_next_runs" {
  value = data.scheduler_occurrences.off_peak.times
}
