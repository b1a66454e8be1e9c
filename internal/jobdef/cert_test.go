package jobdef

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"
)

// TestSubjectNameAsAzureShowsIt: certificateSubjectName is .NET's X509Certificate2.Subject, the
// relative names last encoded first, ", " between them, .NET's labels (S for the state).
func TestSubjectNameAsAzureShowsIt(t *testing.T) {
	atv := func(oid asn1.ObjectIdentifier, v string) pkix.AttributeTypeAndValue {
		return pkix.AttributeTypeAndValue{Type: oid, Value: v}
	}
	oid := func(ids ...int) asn1.ObjectIdentifier { return ids }
	for _, tc := range []struct {
		seq  pkix.RDNSequence
		want string
	}{
		{pkix.RDNSequence{
			{atv(oid(2, 5, 4, 6), "US")}, {atv(oid(2, 5, 4, 8), "st")}, {atv(oid(2, 5, 4, 10), "z")},
			{atv(oid(2, 5, 4, 11), "y")}, {atv(oid(2, 5, 4, 3), "x")},
		}, "CN=x, OU=y, O=z, S=st, C=US"},
		{pkix.RDNSequence{
			{atv(oid(0, 9, 2342, 19200300, 100, 1, 25), "com")}, {atv(oid(0, 9, 2342, 19200300, 100, 1, 25), "contoso")},
			{atv(oid(2, 5, 4, 7), "Redmond"), atv(oid(2, 5, 4, 9), "1 Main St")},
			{atv(oid(2, 5, 4, 10), "Contoso, Ltd."), atv(oid(1, 2, 840, 113549, 1, 9, 1), "ops@contoso.com")},
			{atv(oid(2, 5, 4, 3), ` say "hi"`)}, {atv(oid(1, 2, 3, 4), "x")},
		}, `OID.1.2.3.4=x, CN=" say ""hi""", O="Contoso, Ltd." + E=ops@contoso.com, L=Redmond + STREET=1 Main St, DC=contoso, DC=com`},
		{pkix.RDNSequence{{atv(oid(2, 5, 4, 3), "scheduler-test")}}, "CN=scheduler-test"},
	} {
		raw, err := asn1.Marshal(tc.seq)
		if err != nil {
			t.Fatal(err)
		}
		if got := SubjectName(raw); got != tc.want {
			t.Errorf("SubjectName = %s\nwant          %s", got, tc.want)
		}
	}
	if got := SubjectName([]byte{0x30, 0x03, 0x01}); got != "#300301" {
		t.Errorf("undecodable name: %s", got)
	}
}
