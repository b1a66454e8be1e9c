# A job collection is imported by its ARM id.
terraform import scheduler_job_collection.ops /subscriptions/default/resourceGroups/platform/providers/Microsoft.Scheduler/jobCollections/ops
