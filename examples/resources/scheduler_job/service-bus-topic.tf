# Publish to a Service Bus topic every weekday at 08:00 Berlin time, with message properties;
# when the topic cannot be reached, put a note on a Service Bus queue instead. (RabbitMQ locally:
# run the daemon with --service-bus-endpoint amqp://127.0.0.1:5672 --service-bus-auth plain
# --service-bus-queue-address /amq/queue/{queue} --service-bus-topic-address /exchange/{topic}.)
resource "scheduler_job" "morning_orders" {
  job_collection_id = scheduler_job_collection.ops.id
  name              = "morning-orders"
  start_time        = "2026-01-05T08:00:00"

  action {
    type = "ServiceBusTopic"
    service_bus_topic_message {
      namespace  = "contoso-orders"
      topic_path = "orders"
      message    = jsonencode({ batch = "morning" })
      authentication {
        sas_key_name = "SchedulerSend"
        sas_key      = var.orders_sas_key
      }
      brokered_message_properties {
        content_type = "application/json"
        label        = "morning-batch"
        time_to_live = "PT2H"
      }
      custom_message_properties = {
        appname = "FromScheduler"
      }
    }

    error_action {
      type = "ServiceBusQueue"
      service_bus_queue_message {
        namespace  = "contoso-orders"
        queue_name = "scheduler-errors"
        message    = "the morning orders could not be published"
        authentication {
          sas_key_name = "SchedulerSend"
          sas_key      = var.orders_sas_key
        }
      }
    }
  }

  recurrence {
    frequency = "Week"
    time_zone = "Europe/Berlin"
    schedule {
      week_days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
      hours     = [8]
      minutes   = [0]
    }
  }
}

variable "orders_sas_key" {
  type      = string
  sensitive = true
}
