package jobdef

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Signing secrets (SPEC 8, Standard Webhooks): "whsec_" and the standard base64 of 24 to 64
// bytes.
const (
	SigningSecretPrefix   = "whsec_"
	MinSigningSecretBytes = 24
	MaxSigningSecretBytes = 64
)

// SigningKey returns the HMAC key of a signing secret, or an error saying what is wrong with it
// (never quoting it: it is a secret).
func SigningKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, SigningSecretPrefix)
	if !ok {
		return nil, fmt.Errorf("must start with %q", SigningSecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, errors.New("must be " + SigningSecretPrefix + " followed by standard base64")
	}
	if n := len(key); n < MinSigningSecretBytes || n > MaxSigningSecretBytes {
		return nil, fmt.Errorf("decodes to %d bytes; %d to %d are allowed", n, MinSigningSecretBytes, MaxSigningSecretBytes)
	}
	return key, nil
}

// validateSigning checks a request's signing: a secret is required, the previous one optional,
// both in the whsec_ format.
func validateSigning(ps *problems, path string, s *wire.HTTPSigning) {
	if s.Secret == "" {
		ps.add(path+".secret", "is required for signing")
	} else if _, err := SigningKey(s.Secret); err != nil {
		ps.add(path+".secret", "%v", err)
	}
	if s.PreviousSecret != "" {
		if _, err := SigningKey(s.PreviousSecret); err != nil {
			ps.add(path+".previousSecret", "%v", err)
		}
	}
}
