package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// The Azure error codes (SPEC 2).
const (
	codeBadRequest     = "BadRequest"
	codeAuthentication = "AuthenticationFailed"
	codeNotFound       = "ResourceNotFound"
	codeConflict       = "Conflict"
	codeInternal       = "InternalError"
	codeServerBusy     = "ServerBusy"
	codeRequestTimeout = "RequestTimeout"
	// codeUnsupportedMediaType is ARM's code for a 415 (a body that is not JSON in UTF-8).
	codeUnsupportedMediaType = "UnsupportedMediaType"
)

// apiError is an error answered with an Azure error body.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message) }

func badRequest(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, codeBadRequest, fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{http.StatusNotFound, codeNotFound, fmt.Sprintf(format, args...)}
}

func conflict(format string, args ...any) *apiError {
	return &apiError{http.StatusConflict, codeConflict, fmt.Sprintf(format, args...)}
}

// invalid is the 400 for a list of problems; prefix is put before every path (such as
// "properties.").
func invalid(ps wire.Problems, prefix string) *apiError {
	lines := make([]string, len(ps))
	for i, p := range ps {
		path := p.Path
		if prefix != "" {
			path = strings.TrimSuffix(prefix+path, ".")
		}
		lines[i] = wire.Problem{Path: path, Message: p.Message}.String()
	}
	return &apiError{http.StatusBadRequest, codeBadRequest, strings.Join(lines, "\n")}
}

// decodeProblems turns a wire.Decode error into a 400.
func decodeProblems(err error) *apiError {
	var ps wire.Problems
	if errors.As(err, &ps) {
		return invalid(ps, "")
	}
	return badRequest("%v", err)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, &apiError{http.StatusInternalServerError, codeInternal, "encoding the response failed"})
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeEmpty answers 200 with no body (enable, disable, delete, run).
func writeEmpty(w http.ResponseWriter) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

func writeError(w http.ResponseWriter, e *apiError) {
	if e.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="schedulerd"`)
	}
	b, _ := json.Marshal(wire.ErrorResponse{Error: wire.ErrorBody{Code: e.code, Message: e.message}})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(e.status)
	_, _ = w.Write(b)
}
