# A job is imported by its ARM id. Secrets (passwords, pfx, OAuth secret) are write-only in the
# API: set them in the configuration after the import.
terraform import scheduler_job.nightly_cleanup /subscriptions/default/resourceGroups/default/providers/Microsoft.Scheduler/jobCollections/ops/jobs/nightly-cleanup
