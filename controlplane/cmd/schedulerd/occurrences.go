package main

import (
	"context"
	"fmt"
	"io"
)

func runOccurrences(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "schedulerd occurrences: not implemented yet")
	return 1
}
