#!/usr/bin/env bash
# Makes the machine's RabbitMQ speak AMQP 1.0 and prints its version. RabbitMQ 3.x needs the
# rabbitmq_amqp1_0 plugin (enabled here; enabling it again is harmless); 4.x speaks AMQP 1.0
# natively. The broker itself is the machine's (127.0.0.1:5672, guest/guest), not started here.
set -euo pipefail
version=$(rabbitmqctl version 2>/dev/null | tail -1)
[ -n "$version" ] || { echo "rabbitmq.sh: rabbitmqctl cannot reach the local RabbitMQ" >&2; exit 1; }
case "$version" in
  3.*)
    if ! rabbitmq-plugins list --enabled --minimal 2>/dev/null | grep -qx rabbitmq_amqp1_0; then
      rabbitmq-plugins enable rabbitmq_amqp1_0 >&2
    fi
    ;;
esac
echo "$version"
