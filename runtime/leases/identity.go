package leases

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/user"
	"strings"
	"time"
)

// DetectOwnID is Kopf's detect_own_id: $POD_ID if set, else
// "user@host/YYYYmmddHHMMSS/xyz" for an operator (three random characters
// of Kopf's alphabet), or "user@host" for the freeze and resume commands
// (manual). It is the identity of the peering records (runtime/peering)
// and of every Lease a replica holds.
func DetectOwnID(manual bool) string {
	if pod, ok := os.LookupEnv("POD_ID"); ok {
		return pod
	}
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	} else if v := os.Getenv("USER"); v != "" {
		name = v
	}
	host := descriptiveHostname()
	if manual {
		return name + "@" + host
	}
	const alphabet = "abcdefhijklmnopqrstuvwxyz0123456789" // Kopf's, without "g"
	rnd := make([]byte, 3)
	for i := range rnd {
		rnd[i] = alphabet[rand.IntN(len(alphabet))]
	}
	now := time.Now().UTC().Format("20060102150405")
	return fmt.Sprintf("%s@%s/%s/%s", name, host, now, rnd)
}

// descriptiveHostname is Kopf's get_descriptive_hostname: the host's
// dotted name if it has one that is not an address, else its name, less
// the suffixes .local and .localdomain.
func descriptiveHostname() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	if !strings.Contains(host, ".") {
		if names, err := net.LookupAddr(firstAddr(host)); err == nil {
			for _, n := range names {
				n = strings.TrimSuffix(n, ".")
				if strings.Contains(n, ".") && !strings.HasSuffix(n, ".arpa") && net.ParseIP(n) == nil && strings.HasPrefix(n, host+".") {
					host = n
					break
				}
			}
		}
	}
	for strings.HasSuffix(host, ".local") || strings.HasSuffix(host, ".localdomain") {
		host = strings.TrimSuffix(strings.TrimSuffix(host, ".local"), ".localdomain")
	}
	return host
}

func firstAddr(host string) string {
	addrs, err := net.LookupHost(host)
	if err != nil || len(addrs) == 0 {
		return host
	}
	return addrs[0]
}
