package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TokenUser is the user of Token: an admin (system:masters) known to the
// API server by a static bearer token (--token-auth-file), for tests of
// token credentials (e.g. a kubeconfig whose token changes). The token
// file is read once at start: tokens cannot be revoked while it runs.
const TokenUser = "kopf-token-admin"

// Token returns TokenUser's bearer token, random for each control plane.
func (c *Cluster) Token() string { return c.token }

// configureTokens makes the API server accept Token (before it starts).
func (c *Cluster) configureTokens() error {
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return err
	}
	c.token = hex.EncodeToString(raw)
	dir, err := os.MkdirTemp("", "kopf-tokens-")
	if err != nil {
		return err
	}
	c.certDirs = append(c.certDirs, dir)
	path := filepath.Join(dir, "tokens.csv")
	line := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", c.token, TokenUser, TokenUser)
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		return err
	}
	c.env.ControlPlane.GetAPIServer().Configure().Append("token-auth-file", path)
	return nil
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

// UserConfig returns the client configuration of a user authenticated by
// a client certificate, with no permissions but those that RBAC grants
// its name and groups (and every authenticated user's: discovery).
func (c *Cluster) UserConfig(name string, groups ...string) (*rest.Config, error) {
	user, err := c.env.AddUser(envtest.User{Name: name, Groups: groups}, c.Config)
	if err != nil {
		return nil, fmt.Errorf("adding the user %s: %w", name, err)
	}
	return user.Config(), nil
}
