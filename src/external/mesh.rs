//! Which mesh and gateway kinds carry retry settings. A document of a mesh
//! API group that no reader takes is refused (its retries would be missed
//! in silence) unless it is one of the kinds below, which by their upstream
//! reference carry no retry, timeout or retry-budget settings.

/// `Some(true)`: a kind of a mesh group known to carry no retry settings;
/// `Some(false)`: a mesh group's kind not known so (refused when no reader
/// takes it); `None`: not a mesh group (Kubernetes' own kinds, anything else).
pub(crate) fn retry_free(group: &str, kind: &str) -> Option<bool> {
    let free: &[&str] = match group {
        // istio.io/latest/docs/reference/config/: retries live in
        // VirtualService (read) and DestinationRule (read); an EnvoyFilter
        // may patch any route, so it is not on this list.
        "networking.istio.io" => &[
            "Gateway",
            "ServiceEntry",
            "Sidecar",
            "WorkloadEntry",
            "WorkloadGroup",
            "ProxyConfig",
        ],
        "security.istio.io" => &[
            "AuthorizationPolicy",
            "PeerAuthentication",
            "RequestAuthentication",
        ],
        "telemetry.istio.io" => &["Telemetry"],
        "extensions.istio.io" => &["WasmPlugin"],
        "install.istio.io" => &["IstioOperator"],
        // gateway-api.sigs.k8s.io/reference/spec/: HTTPRoute and GRPCRoute
        // carry `retry`/`timeouts`; the layer-4 routes and the rest do not.
        "gateway.networking.k8s.io" | "gateway.networking.x-k8s.io" => &[
            "Gateway",
            "GatewayClass",
            "ReferenceGrant",
            "TCPRoute",
            "TLSRoute",
            "UDPRoute",
            "BackendTLSPolicy",
            "ListenerSet",
            "XListenerSet",
        ],
        // gateway.envoyproxy.io/docs/api/extension_types/: retries are in
        // BackendTrafficPolicy (read) and HTTPRoute; EnvoyPatchPolicy may
        // patch any route, so it is not on this list.
        "gateway.envoyproxy.io" => &[
            "EnvoyProxy",
            "ClientTrafficPolicy",
            "SecurityPolicy",
            "EnvoyExtensionPolicy",
            "Backend",
            "HTTPRouteFilter",
        ],
        // linkerd.io/2/reference/: retries are ServiceProfile routes and
        // annotations on Services and HTTPRoutes/GRPCRoutes.
        "linkerd.io" => &[],
        "policy.linkerd.io" => &[
            "Server",
            "ServerAuthorization",
            "AuthorizationPolicy",
            "MeshTLSAuthentication",
            "NetworkAuthentication",
            "EgressNetwork",
        ],
        "workload.linkerd.io" => &["ExternalWorkload"],
        // kuma.io/docs/policies/: MeshRetry, MeshTimeout and
        // MeshCircuitBreaker carry them; these do not (MeshHTTPRoute and
        // MeshTCPRoute route and split; the retry policies target them).
        "kuma.io" => &[
            "MeshHTTPRoute",
            "MeshTCPRoute",
            "Mesh",
            "Zone",
            "ZoneIngress",
            "ZoneEgress",
            "Dataplane",
            "DataplaneInsight",
            "MeshTrafficPermission",
            "MeshAccessLog",
            "MeshTrace",
            "MeshMetric",
            "MeshTLS",
            "MeshService",
            "MeshExternalService",
            "MeshMultiZoneService",
            "MeshIdentity",
            "MeshTrust",
            "HostnameGenerator",
        ],
        _ => return None,
    };
    Some(free.contains(&kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mesh_groups_refuse_what_they_do_not_know() {
        assert_eq!(retry_free("networking.istio.io", "Gateway"), Some(true));
        assert_eq!(
            retry_free("networking.istio.io", "EnvoyFilter"),
            Some(false)
        );
        assert_eq!(retry_free("kuma.io", "MeshRetry"), Some(false));
        assert_eq!(retry_free("apps", "Deployment"), None);
        assert_eq!(retry_free("", "ConfigMap"), None);
    }
}
