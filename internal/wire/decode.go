package wire

import "errors"

// Decode strictly decodes a JSON document into v (a pointer to one of this package's types):
// unknown fields, wrong JSON types and malformed JSON are reported as Problems with the JSON path
// of each (e.g. "properties.recurrence.schedule.monthDays[2]: expected an integer, got a string"),
// all of them, never only the first. Property names match case-insensitively, as Azure's do.
// It never panics.
func Decode(data []byte, v any) error {
	return errors.New("wire.Decode: not implemented yet")
}
