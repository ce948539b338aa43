//! Kubernetes manifests: per service a Deployment (one replica: one
//! process, one set of counters) and a Service (`http` 8080, `admin` 9090);
//! a ConfigMap with the topology and fault files; a Job running the driver
//! against the entry, collecting from every Service; the Namespace when the
//! export owns it; and a `kustomization.yaml` listing them, for
//! `kubectl apply -k DIR`.
//!
//! Choices a platform team would ask about:
//! - Prometheus scrape annotations sit on the pods only, so a cluster that
//!   scrapes both pods and service endpoints does not count every series
//!   twice.
//! - Mesh injection is turned off (Istio, Linkerd): a real sidecar would add
//!   retries the topology does not model; its `via` layers run in-process.
//! - Deployments use `Recreate`: two pods of one service during a rollout
//!   would split its counters.
//! - The Job does not retry (`backoffLimit: 0`): a second attempt would
//!   double the load. Its init containers wait for every service's
//!   `/healthz` first, with the image's own client (it has no shell).
//! - Pods run as the image's non-root user with a read-only root file system
//!   and no capabilities (the Pod Security "restricted" profile).
//! - Resources: `sizing`'s rule; CPU requests without CPU limits.
//! - The run's token (start and stop on the admin ports need it) is a
//!   Secret, `secret.yaml`, in every `serve` and the `drive` as an
//!   environment variable; `secret.yaml` is written readable by its owner
//!   only. Each `serve` lets through the names its Service is reached by.

use super::command::{self, ADMIN_PORT, HEALTH_PATH, HTTP_PORT, METRICS_PATH};
use super::yaml::{Entry, Yaml, document, documents, map, s, strs};
use super::{DEFAULT_NAMESPACE, ExportError, Plan, RUN_AS, Target, fingerprint};
use crate::export::sizing::Resources;

/// What a ConfigMap may hold, with room for the object around the data.
const CONFIGMAP_DATA_LIMIT: usize = 1024 * 1024 - 16 * 1024;
const CONFIG_MAP: &str = "retrylint-config";
/// The Secret holding the run's token, and its file.
const SECRET: &str = "retrylint-token";
const SECRET_KEY: &str = "token";
pub(crate) const SECRET_FILE: &str = "secret.yaml";
const CONFIG_VOLUME: &str = "config";
/// What the Job's deadline allows for starting each init container.
const INIT_CONTAINER_START_SECS: u64 = 2;

/// Every file of the export, kustomization first.
pub(crate) fn files(p: &Plan) -> Result<Vec<(String, String)>, ExportError> {
    let topology = &p.x.topology_text.text;
    let fault = &p.x.fault_text.text;
    let data = topology.len() + fault.len();
    if data > CONFIGMAP_DATA_LIMIT {
        return Err(ExportError::TooLarge(data));
    }
    let hash = fingerprint(&[topology, fault]);
    let mut files = Vec::new();
    if p.x.namespace.is_none() {
        files.push((
            "namespace.yaml".to_owned(),
            document(
                &p.header(
                    Target::Kubernetes,
                    "The namespace of the run; `kubectl delete -k .` removes it whole.",
                ),
                &namespace(p),
            ),
        ));
    }
    files.push((
        "configmap.yaml".to_owned(),
        document(
            &p.header(
                Target::Kubernetes,
                "The topology and fault scenario every process reads.",
            ),
            &config_map(p),
        ),
    ));
    files.push((
        SECRET_FILE.to_owned(),
        document(
            &p.header(
                Target::Kubernetes,
                "The run's token: start and stop on every admin port need it. A fresh one at each export.",
            ),
            &secret(p),
        ),
    ));
    for (i, name) in p.names.iter().enumerate() {
        let svc = &p.x.topology.services[i];
        let head = p.header(
            Target::Kubernetes,
            &format!("Service `{}` of the topology: `retrylint serve`.", svc.name),
        );
        let text = documents(&[
            document(&head, &deployment(p, i, &hash)),
            document("", &service(p, i)),
        ]);
        files.push((format!("services/{name}.yaml"), text));
    }
    files.push((
        "drive-job.yaml".to_owned(),
        document(
            &p.header(
                Target::Kubernetes,
                "The load driver: waits for every service, starts the run, drives the load, prints the report (JSON) to its log.",
            ),
            &job(p, &hash),
        ),
    ));
    let resources: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
    files.insert(
        0,
        (
            "kustomization.yaml".to_owned(),
            document(
                &p.header(
                    Target::Kubernetes,
                    &format!(
                        "Apply: `kubectl apply --server-side -k .`; the report, once the Job is done: `kubectl logs -n {} job/{}`.",
                        namespace_name(p),
                        p.driver
                    ),
                ),
                &map()
                    .put("apiVersion", "kustomize.config.k8s.io/v1beta1")
                    .put("kind", "Kustomization")
                    .put("namespace", namespace_name(p))
                    .put("resources", strs(&resources))
                    .build(),
            ),
        ),
    );
    Ok(files)
}

fn namespace_name<'a>(p: &'a Plan) -> &'a str {
    p.x.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE)
}

/// The labels of every object of component `component` named `name`.
fn labels(p: &Plan, name: &str, component: &str) -> Yaml {
    map()
        .put("app.kubernetes.io/name", name)
        .put("app.kubernetes.io/instance", p.instance())
        .put("app.kubernetes.io/component", component)
        .put("app.kubernetes.io/part-of", "retrylint")
        .build()
}

/// What selects the pods of `name`.
fn selector(p: &Plan, name: &str) -> Yaml {
    map()
        .put("app.kubernetes.io/name", name)
        .put("app.kubernetes.io/instance", p.instance())
        .build()
}

fn metadata(p: &Plan, name: &str, component: &str, annotations: Option<Yaml>) -> Yaml {
    map()
        .put("name", name)
        .put("namespace", namespace_name(p))
        .put("labels", labels(p, name, component))
        .put_some("annotations", annotations)
        .build()
}

fn namespace(p: &Plan) -> Yaml {
    map()
        .put("apiVersion", "v1")
        .put("kind", "Namespace")
        .put(
            "metadata",
            map().put("name", DEFAULT_NAMESPACE).put(
                "labels",
                map()
                    .put("app.kubernetes.io/part-of", "retrylint")
                    .put("app.kubernetes.io/instance", p.instance())
                    .put("istio-injection", "disabled"),
            ),
        )
        .build()
}

fn config_map(p: &Plan) -> Yaml {
    map()
        .put("apiVersion", "v1")
        .put("kind", "ConfigMap")
        .put("metadata", metadata(p, CONFIG_MAP, "config", None))
        .put(
            "data",
            map()
                .put(
                    command::TOPOLOGY_FILE,
                    Yaml::Text(p.x.topology_text.text.clone()),
                )
                .put(command::FAULT_FILE, Yaml::Text(p.x.fault_text.text.clone())),
        )
        .build()
}

fn secret(p: &Plan) -> Yaml {
    map()
        .put("apiVersion", "v1")
        .put("kind", "Secret")
        .put("metadata", metadata(p, SECRET, "config", None))
        .put("type", "Opaque")
        .put("stringData", map().put(SECRET_KEY, p.x.token.expose()))
        .build()
}

/// The run's token from the Secret, as `serve` and `drive` read it.
fn token_env() -> Yaml {
    Yaml::Seq(vec![
        map()
            .put("name", command::TOKEN_ENV)
            .put(
                "valueFrom",
                map().put(
                    "secretKeyRef",
                    map().put("name", SECRET).put("key", SECRET_KEY),
                ),
            )
            .build(),
    ])
}

/// The names service `name`'s Service is reached by in namespace `ns`.
fn service_hosts(name: &str, ns: &str) -> Vec<String> {
    vec![
        name.to_owned(),
        format!("{name}.{ns}"),
        format!("{name}.{ns}.svc"),
        format!("{name}.{ns}.svc.cluster.local"),
    ]
}

/// The annotations of every pod: scraping, mesh opt-out, config hash.
fn pod_annotations(hash: &str, scrape: bool) -> Yaml {
    let mut m = map();
    if scrape {
        m = m
            .put("prometheus.io/scrape", "true")
            .put("prometheus.io/port", ADMIN_PORT.to_string())
            .put("prometheus.io/path", METRICS_PATH);
    }
    m.put("sidecar.istio.io/inject", "false")
        .put("linkerd.io/inject", "disabled")
        .put("retrylint/config-hash", hash)
        .build()
}

/// The pod-level settings every pod shares.
fn pod_spec(extra: Vec<Entry>, containers: Vec<Yaml>) -> Yaml {
    let mut entries = extra;
    entries.extend([
        Entry::Pair("enableServiceLinks".into(), false.into()),
        Entry::Pair("automountServiceAccountToken".into(), false.into()),
        Entry::Pair(
            "securityContext".into(),
            map()
                .put("runAsNonRoot", true)
                .put("runAsUser", RUN_AS)
                .put("runAsGroup", RUN_AS)
                .put("seccompProfile", map().put("type", "RuntimeDefault"))
                .build(),
        ),
    ]);
    entries.push(Entry::Pair("containers".into(), Yaml::Seq(containers)));
    entries.push(Entry::Pair(
        "volumes".into(),
        Yaml::Seq(vec![
            map()
                .put("name", CONFIG_VOLUME)
                .put("configMap", map().put("name", CONFIG_MAP))
                .build(),
        ]),
    ));
    Yaml::Map(entries)
}

fn container_security() -> Yaml {
    map()
        .put("allowPrivilegeEscalation", false)
        .put("readOnlyRootFilesystem", true)
        .put("capabilities", map().put("drop", strs(["ALL"])))
        .build()
}

fn config_mount() -> Yaml {
    Yaml::Seq(vec![
        map()
            .put("name", CONFIG_VOLUME)
            .put("mountPath", command::CONFIG_DIR)
            .put("readOnly", true)
            .build(),
    ])
}

fn resources(r: &Resources, what: &str) -> Yaml {
    let (cpu, memory, memory_limit) = r.kubernetes();
    map()
        .comment(&format!("Sized from the load: {}.", r.explain(what)))
        .comment(
            "CPU: 100 µs per exchange, no limit (a CFS quota would stall the process mid-storm).",
        )
        .comment("Memory: 64 MiB + 64 KiB per request in flight; limit twice that.")
        .put(
            "requests",
            map().put("cpu", cpu).put("memory", memory.clone()),
        )
        .put("limits", map().put("memory", memory_limit))
        .build()
}

fn http_get(path: &str, port: &str) -> Yaml {
    map().put("path", path).put("port", port).build()
}

fn deployment(p: &Plan, i: usize, hash: &str) -> Yaml {
    let svc = &p.x.topology.services[i];
    let name = &p.names[i];
    let ports = Yaml::Seq(vec![
        map()
            .put("name", "http")
            .put("containerPort", i64::from(HTTP_PORT))
            .build(),
        map()
            .put("name", "admin")
            .put("containerPort", i64::from(ADMIN_PORT))
            .build(),
    ]);
    let container = map()
        .put("name", "serve")
        .put("image", &p.x.image)
        .put("imagePullPolicy", "IfNotPresent")
        .put(
            "args",
            strs(p.serve_args(i, &service_hosts(name, namespace_name(p)))),
        )
        .put("env", token_env())
        .put("ports", ports)
        .put(
            "readinessProbe",
            map()
                .put("httpGet", http_get(HEALTH_PATH, "admin"))
                .put("periodSeconds", 2)
                .put("failureThreshold", 3),
        )
        .comment("Generous: a restart mid-run would lose the service's counters.")
        .put(
            "livenessProbe",
            map()
                .put("httpGet", http_get(HEALTH_PATH, "admin"))
                .put("periodSeconds", 10)
                .put("timeoutSeconds", 5)
                .put("failureThreshold", 6),
        )
        .put("resources", resources(&p.sizing.services[i], "requests"))
        .put("securityContext", container_security())
        .put("volumeMounts", config_mount())
        .build();
    let service_annotation = map().put("retrylint/service", &svc.name).build();
    map()
        .put("apiVersion", "apps/v1")
        .put("kind", "Deployment")
        .put(
            "metadata",
            metadata(p, name, "serve", Some(service_annotation.clone())),
        )
        .put(
            "spec",
            map()
                .comment("One process per service: its counters are the service's.")
                .put("replicas", 1)
                .put("strategy", map().put("type", "Recreate"))
                .put("selector", map().put("matchLabels", selector(p, name)))
                .put(
                    "template",
                    map()
                        .put(
                            "metadata",
                            map()
                                .put("labels", labels(p, name, "serve"))
                                .put("annotations", pod_annotations(hash, true)),
                        )
                        .put("spec", pod_spec(Vec::new(), vec![container])),
                ),
        )
        .build()
}

fn service(p: &Plan, i: usize) -> Yaml {
    let name = &p.names[i];
    let port = |port_name: &str, port: u16| {
        map()
            .put("name", port_name)
            .put("port", i64::from(port))
            .put("targetPort", port_name)
            .put("appProtocol", "http")
            .build()
    };
    map()
        .put("apiVersion", "v1")
        .put("kind", "Service")
        .put(
            "metadata",
            metadata(
                p,
                name,
                "serve",
                Some(
                    map()
                        .put("retrylint/service", &p.x.topology.services[i].name)
                        .build(),
                ),
            ),
        )
        .put(
            "spec",
            map().put("selector", selector(p, name)).put(
                "ports",
                Yaml::Seq(vec![port("http", HTTP_PORT), port("admin", ADMIN_PORT)]),
            ),
        )
        .build()
}

fn job(p: &Plan, hash: &str) -> Yaml {
    // `wait-<name>` when it fits a container name, else by index (no
    // service's DNS name starts with a digit, so the two cannot meet).
    let waits: Vec<Yaml> = p
        .names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let container = format!("wait-{name}");
            let container = if container.len() <= super::dns::MAX_LABEL {
                container
            } else {
                format!("wait-{i}")
            };
            map()
                .put("name", container)
                .put("image", &p.x.image)
                .put("imagePullPolicy", "IfNotPresent")
                .put(
                    "args",
                    strs(command::wait_for(&format!(
                        "{}{HEALTH_PATH}",
                        command::admin_url(name)
                    ))),
                )
                .put(
                    "resources",
                    map()
                        .put("requests", map().put("cpu", "10m").put("memory", "32Mi"))
                        .put("limits", map().put("memory", "64Mi")),
                )
                .put("securityContext", container_security())
                .build()
        })
        .collect();
    let drive = map()
        .put("name", "drive")
        .put("image", &p.x.image)
        .put("imagePullPolicy", "IfNotPresent")
        .put("args", strs(p.drive_args()))
        .put("env", token_env())
        .put("resources", resources(&p.sizing.driver, "user requests"))
        .put("securityContext", container_security())
        .put("volumeMounts", config_mount())
        .build();
    // The first wait covers the services coming up together; each later
    // init container costs its start (a second or two), the run its
    // horizon, and collecting the counters gets two minutes.
    let horizon = p.x.load.horizon().as_secs().saturating_add(1);
    let waits_at_most = command::WAIT_FOR.as_secs();
    let starts = (p.names.len() as u64).saturating_mul(INIT_CONTAINER_START_SECS);
    let deadline = i64::try_from(
        horizon
            .saturating_add(waits_at_most)
            .saturating_add(starts)
            .saturating_add(120),
    )
    .unwrap_or(i64::MAX);
    map()
        .put("apiVersion", "batch/v1")
        .put("kind", "Job")
        .put("metadata", metadata(p, &p.driver, "drive", None))
        .put(
            "spec",
            map()
                .comment("No retry: a second run would double the load. Rerun: delete the Job, restart the Deployments, apply again.")
                .put("backoffLimit", 0)
                .comment(&format!(
                    "The waits ({waits_at_most} s, then {INIT_CONTAINER_START_SECS} s per init container), the run's horizon, 2 minutes to collect."
                ))
                .put("activeDeadlineSeconds", deadline)
                .put(
                    "template",
                    map()
                        .put(
                            "metadata",
                            map()
                                .put("labels", labels(p, &p.driver, "drive"))
                                .put("annotations", pod_annotations(hash, false)),
                        )
                        .put(
                            "spec",
                            pod_spec(
                                vec![
                                    Entry::Pair("restartPolicy".into(), s("Never")),
                                    Entry::Pair("initContainers".into(), Yaml::Seq(waits)),
                                ],
                                vec![drive],
                            ),
                        ),
                ),
        )
        .build()
}
