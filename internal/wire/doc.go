// Package wire holds the Azure Scheduler 2016-03-01 JSON shapes that the daemon serves and the
// provider sends, the strict decoder that turns a request body into them with a JSON path on
// every problem, and the Problem type every validator in the project reports with.
package wire
