package jobdef

import (
	"crypto/sha1" //nolint:gosec // the certificate thumbprint is SHA-1 by definition, not a security use
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"software.sslmate.com/src/go-pkcs12"

	"github.com/schedulerhq/terraform-provider-scheduler/internal/wire"
)

// Certificate is what a ClientCertificate authentication reads back.
type Certificate struct {
	Thumbprint  string    // SHA-1 of the DER certificate, hex upper case
	NotAfter    time.Time // the expiration date
	SubjectName string    // the subject's distinguished name, e.g. "CN=client"
}

// ParseCertificate decodes a base64 PKCS#12 file with its password and describes its certificate.
// The error says what is wrong (not base64, wrong password, no certificate) without the secret.
func ParseCertificate(pfx, password string) (Certificate, error) {
	raw, err := DecodePfx(pfx)
	if err != nil {
		return Certificate{}, err
	}
	_, cert, _, err := pkcs12.DecodeChain(raw, password)
	if err != nil {
		if errors.Is(err, pkcs12.ErrIncorrectPassword) {
			return Certificate{}, errors.New("cannot be opened: the password is incorrect")
		}
		return Certificate{}, fmt.Errorf("is not a valid PKCS#12 (pfx) file with a private key and a certificate: %w", err)
	}
	sum := sha1.Sum(cert.Raw) //nolint:gosec // see the import
	return Certificate{
		Thumbprint:  strings.ToUpper(hex.EncodeToString(sum[:])),
		NotAfter:    cert.NotAfter.UTC(),
		SubjectName: cert.Subject.String(),
	}, nil
}

// authentications returns the job's request authentications (action and error action).
func authentications(p *wire.JobProperties) []*wire.HTTPAuthentication {
	if p == nil || p.Action == nil {
		return nil
	}
	var out []*wire.HTTPAuthentication
	if r := p.Action.Request; r != nil && r.Authentication != nil {
		out = append(out, r.Authentication)
	}
	if e := p.Action.ErrorAction; e != nil && e.Request != nil && e.Request.Authentication != nil {
		out = append(out, e.Request.Authentication)
	}
	return out
}

// ClearReadOnly blanks what a client may send but only the scheduler writes: status and the
// certificate details.
func ClearReadOnly(p *wire.JobProperties) {
	if p == nil {
		return
	}
	p.Status = nil
	for _, a := range authentications(p) {
		a.CertificateThumbprint, a.CertificateExpirationDate, a.CertificateSubjectName = "", "", ""
	}
}

// FillCertificates sets certificateThumbprint, certificateExpirationDate (RFC 3339, UTC) and
// certificateSubjectName of every ClientCertificate authentication from its pfx, which must be
// plain (not sealed) and valid (see Validate).
func FillCertificates(p *wire.JobProperties) error {
	for _, a := range authentications(p) {
		if t, _ := Canonical(a.Type, authTypes); t != AuthClientCertificate || a.Pfx == "" {
			continue
		}
		c, err := ParseCertificate(a.Pfx, a.Password)
		if err != nil {
			return fmt.Errorf("pfx %w", err)
		}
		a.CertificateThumbprint = c.Thumbprint
		a.CertificateExpirationDate = c.NotAfter.Format(time.RFC3339)
		a.CertificateSubjectName = c.SubjectName
	}
	return nil
}
