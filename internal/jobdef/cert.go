package jobdef

import (
	"crypto/sha1" //nolint:gosec // the certificate thumbprint is SHA-1 by definition, not a security use
	"crypto/x509/pkix"
	"encoding/asn1"
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
	SubjectName string    // the subject's distinguished name as Azure shows it (SubjectName)
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
		SubjectName: SubjectName(cert.RawSubject),
	}, nil
}

// dnLabels are the attribute names .NET's X500DistinguishedName (and so Azure's
// certificateSubjectName) uses; another attribute is shown as OID.<dotted oid>.
var dnLabels = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.4":                    "SN",
	"2.5.4.5":                    "SERIALNUMBER",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "S",
	"2.5.4.9":                    "STREET",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.12":                   "T",
	"2.5.4.42":                   "G",
	"2.5.4.43":                   "I",
	"1.2.840.113549.1.9.1":       "E",
	"0.9.2342.19200300.100.1.25": "DC",
}

// SubjectName formats a DER-encoded distinguished name as Azure Scheduler's
// certificateSubjectName does (.NET's X509Certificate2.Subject): the relative names last encoded
// first, separated by ", " ("CN=x, OU=y, O=z, S=st, C=US"), the attributes of a multi-valued one
// joined by " + ", and a value holding a separator, a quote or surrounding spaces in double quotes
// (inner quotes doubled). A name that cannot be decoded is shown as Go's pkix formats it.
func SubjectName(raw []byte) string {
	var seq pkix.RDNSequence
	if rest, err := asn1.Unmarshal(raw, &seq); err != nil || len(rest) > 0 {
		return fmt.Sprintf("#%X", raw)
	}
	parts := make([]string, 0, len(seq))
	for i := len(seq) - 1; i >= 0; i-- {
		avs := make([]string, 0, len(seq[i]))
		for _, atv := range seq[i] {
			label, ok := dnLabels[atv.Type.String()]
			if !ok {
				label = "OID." + atv.Type.String()
			}
			avs = append(avs, label+"="+dnValue(fmt.Sprint(atv.Value)))
		}
		parts = append(parts, strings.Join(avs, " + "))
	}
	return strings.Join(parts, ", ")
}

// dnValue quotes a value as .NET does when it holds a character with a meaning in a
// distinguished name or begins or ends with a space.
func dnValue(v string) string {
	if v == "" || (!strings.ContainsAny(v, ",+=\"\n<>#;") && strings.TrimSpace(v) == v) {
		return v
	}
	return `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
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
