package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TokenUser is the user of Token: an admin (system:masters) known to the
// API server by a static bearer token (--token-auth-file), for tests of
// token credentials (e.g. a kubeconfig whose token changes). The token
// file is read once at start: tokens cannot be revoked while it runs.
const TokenUser = "kopf-token-admin"

// Token returns TokenUser's bearer token, random for each control plane.
func (c *Cluster) Token() string { return c.token }

// tokenFile writes the API server's --token-auth-file, which makes it
// accept Token, and returns its path.
func (c *Cluster) tokenFile() (string, error) {
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	c.token = hex.EncodeToString(raw)
	dir, err := os.MkdirTemp("", "kopf-tokens-")
	if err != nil {
		return "", err
	}
	c.dirs = append(c.dirs, dir)
	path := filepath.Join(dir, "tokens.csv")
	line := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", c.token, TokenUser, TokenUser)
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// TokenKubeconfig returns a kubeconfig for this API server that
// authenticates with a bearer token (valid or not).
func (c *Cluster) TokenKubeconfig(token string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthorityData: c.Config.CAData}
	cfg.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	cfg.CurrentContext = "test"
	return clientcmd.Write(*cfg)
}
