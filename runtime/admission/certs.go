package admission

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// The keys of the certificate Secret.
const (
	secretCACert  = "ca.crt"
	secretCAKey   = "ca.key"
	secretTLSCert = corev1.TLSCertKey       // tls.crt
	secretTLSKey  = corev1.TLSPrivateKeyKey // tls.key
)

// keyPair is a serving certificate with its key, and the CA bundle that
// verifies it (for the webhooks' caBundle).
type keyPair struct {
	cert     *tls.Certificate
	leaf     *x509.Certificate
	caBundle []byte
}

// certStore holds the current serving certificate; tls.Config's
// GetCertificate reads it, so a renewal needs no restart.
type certStore struct {
	cur atomic.Pointer[keyPair]
	// changed is told of every new CA bundle (not of a new serving
	// certificate with the same CA).
	mu      sync.Mutex
	changed []func(caBundle []byte)
}

func (s *certStore) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	kp := s.cur.Load()
	if kp == nil {
		return nil, errors.New("no serving certificate yet")
	}
	return kp.cert, nil
}

// CABundle returns the CA bundle of the current certificate.
func (s *certStore) CABundle() []byte {
	if kp := s.cur.Load(); kp != nil {
		return kp.caBundle
	}
	return nil
}

// onCABundle registers fn to be called with every new CA bundle.
func (s *certStore) onCABundle(fn func([]byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changed = append(s.changed, fn)
}

// set swaps the certificate; it reports whether anything changed.
func (s *certStore) set(kp *keyPair) bool {
	old := s.cur.Swap(kp)
	if old != nil && bytes.Equal(old.cert.Certificate[0], kp.cert.Certificate[0]) && bytes.Equal(old.caBundle, kp.caBundle) {
		return false
	}
	if old == nil || !bytes.Equal(old.caBundle, kp.caBundle) {
		s.mu.Lock()
		fns := slices.Clone(s.changed)
		s.mu.Unlock()
		for _, fn := range fns {
			fn(kp.caBundle)
		}
	}
	return true
}

// parsePair makes a keyPair of PEM data.
func parsePair(certPEM, keyPEM, caBundle []byte) (*keyPair, error) {
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		return nil, err
	}
	c.Leaf = leaf
	return &keyPair{cert: &c, leaf: leaf, caBundle: caBundle}, nil
}

// secretCerts keeps the CA and the serving certificate in a Secret, so
// that every replica of the operator serves the same certificate and the
// webhooks' caBundle verifies all of them.
//
// The first replica to find no usable certificate generates one and
// creates (or updates, with the resourceVersion it read) the Secret; a
// replica that loses that race (AlreadyExists, Conflict) reads the
// winner's. A serving certificate is renewed, signed by the same CA, when
// less than a third of its validity is left (the CA, valid 10 years, is
// replaced when it expires before the new serving certificate would); the
// Secret is checked every CheckInterval, so the other replicas pick the
// renewal up within one interval.
type secretCerts struct {
	client    corev1client.SecretsGetter
	namespace string
	name      string
	hosts     []string // DNS names and IP addresses of the serving certificate
	validity  time.Duration
	logger    *slog.Logger
	now       func() time.Time
}

// ensure returns a usable certificate from the Secret, generating and
// storing one if there is none or it is due for renewal.
func (sc *secretCerts) ensure(ctx context.Context) (*keyPair, error) {
	secrets := sc.client.Secrets(sc.namespace)
	for attempt := 0; attempt < 5; attempt++ {
		s, err := secrets.Get(ctx, sc.name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading the certificate secret %s/%s: %w", sc.namespace, sc.name, err)
		}
		exists := err == nil
		if exists {
			if kp, ok := sc.usable(s.Data); ok {
				return kp, nil
			}
		}
		var data map[string][]byte
		if exists {
			data = s.Data
		}
		data, err = sc.generate(data)
		if err != nil {
			return nil, err
		}
		if !exists {
			s = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: sc.name, Namespace: sc.namespace, Labels: map[string]string{"app.kubernetes.io/managed-by": "kopf"}},
				Type:       corev1.SecretTypeOpaque,
				Data:       data,
			}
			_, err = secrets.Create(ctx, s, metav1.CreateOptions{})
		} else {
			s = s.DeepCopy()
			s.Data = data
			_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
		}
		switch {
		case err == nil:
			sc.logger.Info(fmt.Sprintf("Generated a webhook certificate for %v in the secret %s/%s, valid until %s.", sc.hosts, sc.namespace, sc.name, sc.expiry(data).Format(time.RFC3339)))
			return sc.usableOrErr(data)
		case apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err):
			// Another replica was first: use what it stored.
			continue
		default:
			return nil, fmt.Errorf("storing the certificate secret %s/%s: %w", sc.namespace, sc.name, err)
		}
	}
	return nil, fmt.Errorf("the certificate secret %s/%s keeps changing", sc.namespace, sc.name)
}

func (sc *secretCerts) expiry(data map[string][]byte) time.Time {
	if kp, err := parsePair(data[secretTLSCert], data[secretTLSKey], nil); err == nil {
		return kp.leaf.NotAfter
	}
	return time.Time{}
}

func (sc *secretCerts) usableOrErr(data map[string][]byte) (*keyPair, error) {
	kp, ok := sc.usable(data)
	if !ok {
		return nil, errors.New("the generated certificate is not usable") // never
	}
	return kp, nil
}

// usable returns the Secret's certificate if it is valid, signed by its
// CA, for every host, and not due for renewal.
func (sc *secretCerts) usable(data map[string][]byte) (*keyPair, bool) {
	kp, err := parsePair(data[secretTLSCert], data[secretTLSKey], data[secretCACert])
	if err != nil {
		return nil, false
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data[secretCACert]) {
		return nil, false
	}
	now := sc.now()
	if now.Before(kp.leaf.NotBefore.Add(-5*time.Minute)) || sc.due(kp.leaf, now) {
		return nil, false
	}
	for _, h := range sc.hosts {
		if _, err := kp.leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			return nil, false
		}
	}
	return kp, true
}

// due says whether a certificate is due for renewal: a third of its
// validity or less is left.
func (sc *secretCerts) due(c *x509.Certificate, now time.Time) bool {
	return c.NotAfter.Sub(now) < c.NotAfter.Sub(c.NotBefore)/3
}

// generate returns the Secret's data with a new serving certificate,
// signed by the CA in old if it is valid long enough, else by a new CA.
func (sc *secretCerts) generate(old map[string][]byte) (map[string][]byte, error) {
	now := sc.now()
	caCert, caKey := sc.loadCA(old, now)
	var caPEM, caKeyPEM []byte
	if caCert == nil {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		caCert, err = cert.NewSelfSignedCACert(cert.Config{CommonName: "kopf-webhook-ca", Organization: []string{"kopf"}}, key)
		if err != nil {
			return nil, fmt.Errorf("generating the webhook CA: %w", err)
		}
		caKey = key
		if caKeyPEM, err = keyutil.MarshalPrivateKeyToPEM(key); err != nil {
			return nil, err
		}
		if caPEM, err = cert.EncodeCertificates(caCert); err != nil {
			return nil, err
		}
	} else {
		caPEM, caKeyPEM = old[secretCACert], old[secretCAKey]
	}
	certPEM, keyPEM, err := signServing(caCert, caKey, sc.hosts, now, sc.validity)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{secretCACert: caPEM, secretCAKey: caKeyPEM, secretTLSCert: certPEM, secretTLSKey: keyPEM}, nil
}

// loadCA returns the CA of old if it outlives a new serving certificate.
func (sc *secretCerts) loadCA(old map[string][]byte, now time.Time) (*x509.Certificate, crypto.Signer) {
	certs, err := cert.ParseCertsPEM(old[secretCACert])
	if err != nil || len(certs) != 1 || !certs[0].IsCA {
		return nil, nil
	}
	if certs[0].NotAfter.Before(now.Add(sc.validity)) {
		return nil, nil
	}
	k, err := keyutil.ParsePrivateKeyPEM(old[secretCAKey])
	if err != nil {
		return nil, nil
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, nil
	}
	return certs[0], signer
}

// signServing makes a serving certificate for hosts (DNS names and IP
// addresses; the first is the common name) signed by the CA.
func signServing(ca *x509.Certificate, caKey crypto.Signer, hosts []string, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: hosts[0], Organization: []string{"kopf"}},
		NotBefore:    now.Add(-time.Minute).UTC(),
		NotAfter:     now.Add(validity).UTC(),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the webhook certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	if certPEM, err = cert.EncodeCertificates(leaf); err != nil {
		return nil, nil, err
	}
	if keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, nil
}

// fileCerts reads a serving certificate and key from files given by the
// user, and again when they change (see the package doc on why by
// polling).
type fileCerts struct {
	what                      string // whose certificate, in errors and logs: "webhook" ("" too), "metrics"
	certFile, keyFile, caFile string
	digest                    [32]byte
}

// reload loads the files again and, if they have changed, sets their pair;
// it logs what happened.
func (fc *fileCerts) reload(logger *slog.Logger, set func(*keyPair) bool) {
	kp, changed, err := fc.load()
	switch {
	case err != nil:
		logger.Error(fmt.Sprintf("The %s certificate cannot be reloaded: %s", fc.whose(), err))
	case changed:
		set(kp)
		logger.Info(fmt.Sprintf("Reloaded the %s certificate: its files have changed.", fc.whose()))
	}
}

func (fc *fileCerts) whose() string {
	if fc.what == "" {
		return "webhook"
	}
	return fc.what
}

// CertFiles is a serving certificate and its key read from files, and
// read again when their content changes (polled, as the webhook server's
// given files are: see the package doc): the one implementation of both
// the webhook server's files (settings.WebhookServer.CertFile) and those
// of the operator's other HTTPS endpoints (the metrics'). Its
// GetCertificate is a tls.Config's, so a reload needs no restart.
type CertFiles struct {
	files fileCerts
	store certStore
}

// LoadCertFiles reads the PEM certificate and key files; what names whose
// certificate it is in errors and logs ("metrics").
func LoadCertFiles(what, certFile, keyFile string) (*CertFiles, error) {
	c := &CertFiles{files: fileCerts{what: what, certFile: certFile, keyFile: keyFile}}
	kp, _, err := c.files.load()
	if err != nil {
		return nil, err
	}
	c.store.set(kp)
	return c, nil
}

// GetCertificate returns the current certificate (tls.Config's
// GetCertificate).
func (c *CertFiles) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.store.GetCertificate(hello)
}

// Watch reads the files again every interval until ctx is done, serving
// their new content if it has changed (and logging it); a failed read is
// logged, and the last certificate read stays.
func (c *CertFiles) Watch(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	every(ctx, interval, func() { c.files.reload(logger, c.store.set) })
}

// load reads the files; changed is false if their content is the same
// as at the last load.
func (fc *fileCerts) load() (kp *keyPair, changed bool, err error) {
	h := sha256.New()
	var datas [][]byte
	for _, f := range []string{fc.certFile, fc.keyFile, fc.caFile} {
		if f == "" {
			datas = append(datas, nil)
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, false, fmt.Errorf("reading the %s certificate: %w", fc.whose(), err)
		}
		_, _ = io.Copy(h, bytes.NewReader(data))
		datas = append(datas, data)
	}
	var digest [32]byte
	copy(digest[:], h.Sum(nil))
	if digest == fc.digest {
		return nil, false, nil
	}
	caBundle := datas[2]
	if caBundle == nil {
		caBundle = datas[0] // Kopf: the certificate itself, if no CA file
	}
	kp, err = parsePair(datas[0], datas[1], caBundle)
	if err != nil {
		return nil, false, fmt.Errorf("loading the %s certificate %s and key %s: %w", fc.whose(), fc.certFile, fc.keyFile, err)
	}
	fc.digest = digest
	return kp, true, nil
}
