# The last 10 failed attempts of a job, newest first.
data "scheduler_job_history" "cleanup_failures" {
  job_id = "/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/ops/jobs/nightly-cleanup"
  status = "Failed"
  max    = 10
}

output "last_failure" {
  value = try(data.scheduler_job_history.cleanup_failures.entries[0].message, null)
}
