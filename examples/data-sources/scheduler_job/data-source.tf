data "scheduler_job" "cleanup" {
  job_collection_id = "/subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/ops"
  name              = "nightly-cleanup"
}

output "cleanup_next_run" {
  value = data.scheduler_job.cleanup.status.next_execution_time
}
