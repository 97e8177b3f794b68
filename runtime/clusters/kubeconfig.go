package clusters

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// FromKubeconfig is the client configuration of a kubeconfig's current
// context, as kubectl would use it: data is the kubeconfig's content;
// origin, if not empty, is the file it was read from, against whose
// directory the relative paths of certificates and keys are resolved (as
// clientcmd.LoadFromFile does). Only data is read: nothing falls back to
// the environment, the in-cluster configuration or ~/.kube/config.
func FromKubeconfig(data []byte, origin string) (*rest.Config, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("parsing the kubeconfig: %w", err)
	}
	if origin != "" {
		for _, c := range cfg.Clusters {
			c.LocationOfOrigin = origin
		}
		for _, a := range cfg.AuthInfos {
			a.LocationOfOrigin = origin
		}
		if err := clientcmd.ResolveLocalPaths(cfg); err != nil {
			return nil, fmt.Errorf("resolving the kubeconfig's paths: %w", err)
		}
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig's current context: %w", err)
	}
	return rc, nil
}
