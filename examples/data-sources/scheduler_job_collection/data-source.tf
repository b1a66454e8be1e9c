data "scheduler_job_collection" "ops" {
  name           = "ops"
  resource_group = "platform"
}

output "ops_collection_id" {
  value = data.scheduler_job_collection.ops.id
}
