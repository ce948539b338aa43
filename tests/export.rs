//! `retrylint export`: the Kubernetes and Compose manifests are valid for the
//! tools that read them (`kubectl kustomize`, Kubernetes' own OpenAPI schemas,
//! the Compose specification's schema), name every object with a DNS label,
//! collect from every Service, and say which names they had to change.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command as Process;

use crate::common;

use common::run::retrylint;
use serde_json::{Value as Json, json};

use retrylint::export::{self, Export, Target, dns, inputs};
use retrylint::faults;
use retrylint::input::yaml::{self, Node, Value};
use retrylint::run::LoadSettings;
use retrylint::topology::{self, Presets, Topology};

/// A topology whose service names are not DNS labels: upper case and `_`,
/// a name over 63 characters, and two names that map to one label beside a
/// service that already has it.
const ODD_NAMES: &str = "version: 1
name: Odd_Shop
entry: Web_Frontend
services:
  Web_Frontend:
    calls:
      - { to: Payments_API, timeout: 1s, retry: { max_attempts: 2, backoff: { kind: constant, base: 10ms } } }
      - { to: payments-api, timeout: 1s }
      - { to: Cart.Service, timeout: 1s }
      - { to: cart_service, timeout: 1s }
      - { to: Inventory_Service_With_A_Name_Far_Longer_Than_Any_DNS_Label_Could_Ever_Hold, timeout: 1s }
  Payments_API: {}
  payments-api: {}
  Cart.Service: {}
  cart_service: {}
  Inventory_Service_With_A_Name_Far_Longer_Than_Any_DNS_Label_Could_Ever_Hold: {}
";

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("export")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The token of [`exported`]'s manifests (the CLI makes a random one).
const TOKEN: &str = "export-test-token-0123456789";

/// The export of `t` as the CLI makes it, with the default load.
fn exported(t: &Topology, target: Target, fault: Option<&str>) -> export::Exported {
    let (scenario, fault_text) = inputs::fault(fault).unwrap();
    let x = Export {
        topology: t,
        topology_text: inputs::topology_text(t, &Presets::embedded()),
        scenario,
        fault_text,
        load: LoadSettings::default(),
        expect: Vec::new(),
        image: export::DEFAULT_IMAGE.into(),
        namespace: None,
        token: retrylint::chaos::Token::new(TOKEN).unwrap(),
    };
    export::export(target, &x).unwrap()
}

fn ecommerce() -> Topology {
    topology::load(Path::new("examples/ecommerce.yaml"), &Presets::embedded()).unwrap()
}

fn odd_names() -> Topology {
    topology::load_str(ODD_NAMES, "odd.yaml", "odd", &Presets::embedded()).unwrap()
}

/// A located YAML tree as JSON, for schemas and lookups.
fn to_json(n: &Node) -> Json {
    match &n.value {
        Value::Null => Json::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i64::try_from(*i).unwrap()),
        Value::Float(f) => json!(f),
        Value::Str(s) => json!(s.as_str()),
        Value::Seq(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Map(entries) => Json::Object(
            entries
                .iter()
                .map(|(k, v)| match &k.value {
                    Value::Str(k) => (k.to_string(), to_json(v)),
                    other => panic!("key {other:?}"),
                })
                .collect(),
        ),
    }
}

/// Every document of a multi-document YAML text, read with the project's
/// own YAML reader.
fn documents(text: &str) -> Vec<Json> {
    let mut docs = Vec::new();
    let mut current = String::new();
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "---" {
            docs.push(std::mem::take(&mut current));
        } else {
            current.push_str(line);
        }
    }
    docs.push(current);
    docs.iter()
        .filter(|d| {
            d.lines()
                .any(|l| !l.trim().is_empty() && !l.starts_with('#'))
        })
        .map(|d| to_json(&yaml::parse(d).unwrap_or_else(|e| panic!("{}\n{d}", e.message))))
        .collect()
}

/// Every Kubernetes object of an export, with the file it is in.
fn objects(e: &export::Exported) -> Vec<(String, Json)> {
    e.files
        .iter()
        .filter(|(name, _)| name != "kustomization.yaml")
        .flat_map(|(name, text)| documents(text).into_iter().map(move |d| (name.clone(), d)))
        .collect()
}

fn of_kind<'a>(objects: &'a [(String, Json)], kind: &str) -> Vec<&'a Json> {
    objects
        .iter()
        .map(|(_, o)| o)
        .filter(|o| o["kind"] == kind)
        .collect()
}

fn strings(v: &Json) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

/// The values of every `flag VALUE` pair in `args`.
fn flag_values(args: &[String], flag: &str) -> Vec<String> {
    args.windows(2)
        .filter(|w| w[0] == flag)
        .map(|w| w[1].clone())
        .collect()
}

fn kubectl() -> Option<&'static str> {
    let found = Process::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        Some("kubectl")
    } else {
        common::absent::tool_missing(
            "kubectl kustomize of the export",
            "kubectl",
            "https://kubernetes.io/docs/tasks/tools/",
        );
        None
    }
}

fn write(e: &export::Exported, name: &str) -> PathBuf {
    let dir = scratch(name);
    export::write(&dir, e).unwrap();
    dir
}

#[test]
fn kubectl_kustomize_builds_the_exported_directory() {
    let Some(kubectl) = kubectl() else { return };
    for (name, t, fault) in [
        ("k8s-ecommerce", ecommerce(), Some("503-burst")),
        ("k8s-odd", odd_names(), None),
    ] {
        let e = exported(&t, Target::Kubernetes, fault);
        let dir = write(&e, name);
        let out = Process::new(kubectl)
            .arg("kustomize")
            .arg(&dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {stderr}");
        let built = documents(&String::from_utf8(out.stdout).unwrap());
        // Namespace, ConfigMap, Secret, a Deployment and a Service per
        // service, the Job.
        assert_eq!(built.len(), 4 + 2 * t.services.len(), "{name}");
        let kinds: BTreeMap<String, usize> = built.iter().fold(BTreeMap::new(), |mut m, o| {
            *m.entry(o["kind"].as_str().unwrap().to_owned()).or_default() += 1;
            m
        });
        let n = t.services.len();
        assert_eq!(
            kinds,
            BTreeMap::from([
                ("ConfigMap".into(), 1),
                ("Deployment".into(), n),
                ("Job".into(), 1),
                ("Namespace".into(), 1),
                ("Secret".into(), 1),
                ("Service".into(), n),
            ])
        );
        for o in &built {
            if o["kind"] != "Namespace" {
                assert_eq!(o["metadata"]["namespace"], "retrylint", "{o}");
            }
        }
        // kustomize hands the files through unchanged: the ConfigMap still
        // holds the topology to the byte.
        let cm = built.iter().find(|o| o["kind"] == "ConfigMap").unwrap();
        assert_eq!(
            cm["data"]["topology.yaml"],
            inputs::topology_text(&t, &Presets::embedded()).text
        );
    }
}

/// Hands the Kubernetes schemas the definitions they refer to, offline.
struct Definitions;

impl jsonschema::Retrieve for Definitions {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Json, Box<dyn std::error::Error + Send + Sync>> {
        match uri.as_str() {
            "https://kubernetes.io/api/_definitions.json" => Ok(serde_json::from_str(
                include_str!("data/kubernetes/_definitions.json"),
            )?),
            other => Err(format!("no offline copy of {other}").into()),
        }
    }
}

#[test]
fn every_object_validates_against_the_kubernetes_schema() {
    let schema = |text: &str| {
        let schema: Json = serde_json::from_str(text).unwrap();
        jsonschema::options()
            .with_retriever(Definitions)
            .build(&schema)
            .expect("schema compiles")
    };
    let validators = [
        (
            "Deployment",
            schema(include_str!("data/kubernetes/deployment-apps-v1.json")),
        ),
        (
            "Service",
            schema(include_str!("data/kubernetes/service-v1.json")),
        ),
        (
            "Job",
            schema(include_str!("data/kubernetes/job-batch-v1.json")),
        ),
        (
            "ConfigMap",
            schema(include_str!("data/kubernetes/configmap-v1.json")),
        ),
        (
            "Namespace",
            schema(include_str!("data/kubernetes/namespace-v1.json")),
        ),
        (
            "Secret",
            schema(include_str!("data/kubernetes/secret-v1.json")),
        ),
    ];
    for t in [ecommerce(), odd_names()] {
        let e = exported(&t, Target::Kubernetes, Some("throttle-429"));
        for (file, o) in objects(&e) {
            let kind = o["kind"].as_str().unwrap();
            let (_, v) = validators
                .iter()
                .find(|(k, _)| *k == kind)
                .unwrap_or_else(|| panic!("{file}: unexpected kind {kind}"));
            let errors: Vec<String> = v
                .iter_errors(&o)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{file} {kind}: {errors:#?}");
        }
    }
    // The strict schema does reject what Kubernetes would: a misspelt field.
    let e = exported(&ecommerce(), Target::Kubernetes, None);
    let (_, mut deployment) = objects(&e)
        .into_iter()
        .find(|(_, o)| o["kind"] == "Deployment")
        .unwrap();
    deployment["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = json!("Always");
    assert!(!validators[0].1.is_valid(&deployment));
}

#[test]
fn objects_have_the_fields_kubernetes_requires() {
    for t in [ecommerce(), odd_names()] {
        let e = exported(&t, Target::Kubernetes, Some("503-burst"));
        let objects = objects(&e);
        for (file, o) in &objects {
            for field in ["apiVersion", "kind"] {
                assert!(o[field].is_string(), "{file}: no {field}");
            }
            let name = o["metadata"]["name"].as_str().unwrap();
            assert!(dns::is_label(name), "{file}: {name}");
        }
        let deployments = of_kind(&objects, "Deployment");
        let services = of_kind(&objects, "Service");
        assert_eq!(deployments.len(), t.services.len());
        assert_eq!(services.len(), t.services.len());
        for d in &deployments {
            let template = &d["spec"]["template"];
            let labels = template["metadata"]["labels"].as_object().unwrap();
            let selector = d["spec"]["selector"]["matchLabels"].as_object().unwrap();
            assert!(!selector.is_empty());
            for (k, v) in selector {
                assert_eq!(
                    labels.get(k),
                    Some(v),
                    "selector {k} of {}",
                    d["metadata"]["name"]
                );
            }
            assert_eq!(d["spec"]["replicas"], 1);
            let containers = template["spec"]["containers"].as_array().unwrap();
            assert_eq!(containers.len(), 1);
            let c = &containers[0];
            assert_eq!(c["image"], "retrylint:latest");
            assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/healthz");
            assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
            let requests = &c["resources"]["requests"];
            assert!(requests["cpu"].as_str().unwrap().ends_with('m'));
            assert!(
                c["resources"]["limits"]["memory"]
                    .as_str()
                    .unwrap()
                    .ends_with("Mi")
            );
            let annotations = &template["metadata"]["annotations"];
            assert_eq!(annotations["prometheus.io/scrape"], "true");
            assert_eq!(annotations["prometheus.io/port"], "9090");
            assert_eq!(annotations["prometheus.io/path"], "/metrics");
            for label in ["app.kubernetes.io/name", "app.kubernetes.io/part-of"] {
                assert!(labels.contains_key(label), "{label}");
            }
            assert_eq!(labels["app.kubernetes.io/part-of"], "retrylint");
        }
        // Each Service selects exactly the pods of its own Deployment.
        for s in &services {
            let selector = s["spec"]["selector"].as_object().unwrap();
            let matching: Vec<_> = deployments
                .iter()
                .filter(|d| {
                    let labels = d["spec"]["template"]["metadata"]["labels"]
                        .as_object()
                        .unwrap();
                    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
                })
                .collect();
            assert_eq!(matching.len(), 1, "{}", s["metadata"]["name"]);
            assert_eq!(matching[0]["metadata"]["name"], s["metadata"]["name"]);
            let ports: Vec<(i64, &str)> = s["spec"]["ports"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p["port"].as_i64().unwrap(), p["name"].as_str().unwrap()))
                .collect();
            assert_eq!(ports, [(8080, "http"), (9090, "admin")]);
        }
        let jobs = of_kind(&objects, "Job");
        assert_eq!(jobs.len(), 1);
        let spec = &jobs[0]["spec"]["template"]["spec"];
        assert_eq!(spec["restartPolicy"], "Never");
        assert_eq!(jobs[0]["spec"]["backoffLimit"], 0);
        assert!(!spec["containers"][0]["image"].as_str().unwrap().is_empty());
        // The driver's pods match no Service.
        let driver_labels = jobs[0]["spec"]["template"]["metadata"]["labels"]
            .as_object()
            .unwrap();
        for s in &services {
            let selector = s["spec"]["selector"].as_object().unwrap();
            assert!(
                !selector
                    .iter()
                    .all(|(k, v)| driver_labels.get(k) == Some(v))
            );
        }
    }
}

#[test]
fn the_job_collects_from_every_service_and_waits_for_each() {
    for t in [ecommerce(), odd_names()] {
        let e = exported(&t, Target::Kubernetes, None);
        let objects = objects(&e);
        let service_names: BTreeSet<String> = of_kind(&objects, "Service")
            .iter()
            .map(|s| s["metadata"]["name"].as_str().unwrap().to_owned())
            .collect();
        let job = of_kind(&objects, "Job")[0];
        let spec = &job["spec"]["template"]["spec"];
        let args = strings(&spec["containers"][0]["args"]);
        assert_eq!(args[..2], ["drive", "/etc/retrylint/topology.yaml"]);
        let collect: BTreeSet<String> = flag_values(&args, "--collect").into_iter().collect();
        let want: BTreeSet<String> = service_names
            .iter()
            .map(|n| format!("http://{n}:9090"))
            .collect();
        assert_eq!(collect, want);
        assert_eq!(collect.len(), t.services.len());
        let entry = &dns::dns_names(&t)[t.entry];
        assert_eq!(
            flag_values(&args, "--entry"),
            [format!("http://{entry}:8080")]
        );
        assert_eq!(flag_values(&args, "--format"), ["json"]);
        let waited: BTreeSet<String> = spec["initContainers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| strings(&c["args"]).last().unwrap().clone())
            .collect();
        let want: BTreeSet<String> = service_names
            .iter()
            .map(|n| format!("http://{n}:9090/healthz"))
            .collect();
        assert_eq!(waited, want);
        // Every serve process names its service as the topology does.
        let served: BTreeSet<String> = of_kind(&objects, "Deployment")
            .iter()
            .flat_map(|d| {
                flag_values(
                    &strings(&d["spec"]["template"]["spec"]["containers"][0]["args"]),
                    "--service",
                )
            })
            .collect();
        let names: BTreeSet<String> = t.services.iter().map(|s| s.name.clone()).collect();
        assert_eq!(served, names);
    }
}

#[test]
fn names_that_are_not_dns_labels_are_mapped_and_reported() {
    let t = odd_names();
    let names = dns::dns_names(&t);
    let by_service: BTreeMap<&str, &str> = t
        .services
        .iter()
        .zip(&names)
        .map(|(s, n)| (s.name.as_str(), n.as_str()))
        .collect();
    assert_eq!(by_service["Web_Frontend"], "web-frontend");
    // The one already valid keeps its name; the two that map onto it, and
    // the two that map onto each other, get their suffixes.
    assert_eq!(by_service["payments-api"], "payments-api");
    for n in ["Payments_API", "Cart.Service", "cart_service"] {
        let label = by_service[n];
        // 12 characters, `-` and the five of the suffix.
        assert_eq!(label.len(), 18, "{n}: {label}");
    }
    assert!(by_service["Payments_API"].starts_with("payments-api-"));
    assert!(by_service["Cart.Service"].starts_with("cart-service-"));
    assert!(by_service["cart_service"].starts_with("cart-service-"));
    let long =
        by_service["Inventory_Service_With_A_Name_Far_Longer_Than_Any_DNS_Label_Could_Ever_Hold"];
    assert_eq!(
        long,
        "inventory-service-with-a-name-far-longer-than-any-dns-label-cou"
    );
    assert_eq!(long.len(), 63);
    let unique: BTreeSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len());
    assert!(names.iter().all(|n| dns::is_label(n)), "{names:?}");

    // The CLI reports every changed name on stderr, and the manifests
    // record them.
    let dir = scratch("cli-odd");
    let topology = dir.join("odd.yaml");
    std::fs::write(&topology, ODD_NAMES).unwrap();
    let out = dir.join("out");
    let (code, stdout, stderr) = retrylint(&[
        "export",
        "kubernetes",
        topology.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "");
    for (service, label) in t.services.iter().zip(&names) {
        let note = format!("note: service `{}` is `{label}` in DNS", service.name);
        assert_eq!(
            stderr.contains(&note),
            service.name != *label,
            "{note}\n{stderr}"
        );
        let file = std::fs::read_to_string(out.join(format!("services/{label}.yaml"))).unwrap();
        assert!(
            file.contains(&format!("retrylint/service: {}\n", service.name)),
            "{file}"
        );
        if service.name != *label {
            let kustomization = std::fs::read_to_string(out.join("kustomization.yaml")).unwrap();
            assert!(
                kustomization.contains(&format!("#   {} → {label}\n", service.name)),
                "{kustomization}"
            );
        }
    }
    assert_eq!(stderr.matches("in DNS").count(), 5, "{stderr}");
}

#[test]
fn the_configmap_ships_the_files_to_the_byte_and_keeps_their_names() {
    let t = ecommerce();
    let e = exported(&t, Target::Kubernetes, Some("throttle-429"));
    let (_, cm) = objects(&e)
        .into_iter()
        .find(|(_, o)| o["kind"] == "ConfigMap")
        .unwrap();
    let source = std::fs::read_to_string("examples/ecommerce.yaml").unwrap();
    assert_eq!(cm["data"]["topology.yaml"], source);
    assert_eq!(
        cm["data"]["fault.yaml"],
        std::fs::read_to_string("faults/throttle-429.yaml").unwrap()
    );
    // A topology named by its file stem is shipped with `name:` added, so
    // that the report inside the cluster names it the same.
    let t = odd_names();
    let shipped = inputs::topology_text(&t, &Presets::embedded());
    assert!(!shipped.named, "Odd_Shop names itself");
    let stem_named = topology::load_str(
        "version: 1\nservices:\n  web: {}\n",
        "checkout.yaml",
        "checkout",
        &Presets::embedded(),
    )
    .unwrap();
    let e = exported(&stem_named, Target::Kubernetes, None);
    let (_, cm) = objects(&e)
        .into_iter()
        .find(|(_, o)| o["kind"] == "ConfigMap")
        .unwrap();
    let text = cm["data"]["topology.yaml"].as_str().unwrap();
    let reloaded =
        topology::load_str(text, "topology.yaml", "topology", &Presets::embedded()).unwrap();
    assert_eq!(reloaded.name, "checkout");
    let fault = faults::load_str(cm["data"]["fault.yaml"].as_str().unwrap(), "fault.yaml").unwrap();
    assert_eq!(fault.name, "none");
    assert!(fault.phases.is_empty());
}

#[test]
fn the_compose_file_follows_the_compose_specification() {
    let schema: Json =
        serde_json::from_str(include_str!("data/compose-spec/compose-spec.json")).unwrap();
    let validator = jsonschema::options()
        .build(&schema)
        .expect("schema compiles");
    for t in [ecommerce(), odd_names()] {
        let e = exported(&t, Target::Compose, Some("503-burst"));
        let files: BTreeMap<&str, &str> = e
            .files
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        assert_eq!(
            files.keys().copied().collect::<Vec<_>>(),
            ["compose.yaml", "fault.yaml", "topology.yaml"]
        );
        let mut compose = documents(files["compose.yaml"]).remove(0);
        assert_eq!(compose["name"], dns::to_label(&t.name));
        // The vendored schema (2021) predates the top-level `name`, which
        // the specification added in 2022; the rest must match it.
        compose.as_object_mut().unwrap().remove("name");
        let errors: Vec<String> = validator
            .iter_errors(&compose)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
        let services = compose["services"].as_object().unwrap();
        let names = dns::dns_names(&t);
        assert_eq!(services.len(), names.len() + 1);
        for (i, name) in names.iter().enumerate() {
            let s = &services[name];
            let command = strings(&s["command"]);
            assert_eq!(
                command,
                retrylint::export::command::serve(
                    &t.services[i].name,
                    42,
                    std::slice::from_ref(name)
                )
            );
            let test = strings(&s["healthcheck"]["test"]);
            assert_eq!(test[..3], ["CMD", "retrylint", "probe-client"]);
            assert_eq!(test.last().unwrap(), "http://127.0.0.1:9090/healthz");
        }
        let driver = &services["retrylint-drive"];
        let depends = driver["depends_on"].as_object().unwrap();
        let depends_on: BTreeSet<&String> = depends.keys().collect();
        assert_eq!(depends_on, names.iter().collect());
        assert!(
            depends
                .values()
                .all(|d| d["condition"] == "service_healthy")
        );
        let collect = flag_values(&strings(&driver["command"]), "--collect");
        assert_eq!(
            collect,
            names
                .iter()
                .map(|n| format!("http://{n}:9090"))
                .collect::<Vec<_>>()
        );
        assert_eq!(
            files["topology.yaml"],
            inputs::topology_text(&t, &Presets::embedded()).text
        );
    }
    // The schema does reject a broken file.
    let broken =
        json!({ "services": { "web": { "depends_on": { "db": { "condition": "healthy" } } } } });
    assert!(!validator.is_valid(&broken));
}

#[test]
fn snapshot_of_the_ecommerce_manifests() {
    let t = ecommerce();
    for (target, fault) in [
        (Target::Kubernetes, "503-burst"),
        (Target::Compose, "503-burst"),
    ] {
        let e = exported(&t, target, Some(fault));
        let all: String = e
            .files
            .iter()
            .filter(|(name, _)| target == Target::Kubernetes || name == "compose.yaml")
            .map(|(name, text)| format!("=== {name} ===\n{text}"))
            .collect();
        insta::assert_snapshot!(format!("ecommerce_{}", target.name()), all);
    }
}

#[test]
fn the_cli_writes_the_directory_and_reports_what_it_did() {
    let dir = scratch("cli-ecommerce");
    let out = dir.join("k8s");
    let (code, stdout, stderr) = retrylint(&[
        "export",
        "kubernetes",
        "examples/ecommerce.yaml",
        "--fault",
        "total-outage",
        "--image",
        "registry.example.com/retrylint:0.1.0",
        "--namespace",
        "game-day",
        "--clients",
        "4",
        "--requests",
        "40",
        "--seed",
        "7",
        "--expect",
        "success >= 0.5",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("namespace `game-day` is assumed to exist"),
        "{stderr}"
    );
    assert!(stderr.contains("wrote 12 files to"), "{stderr}");
    assert!(!out.join("namespace.yaml").exists());
    let job = documents(&std::fs::read_to_string(out.join("drive-job.yaml")).unwrap()).remove(0);
    assert_eq!(job["metadata"]["namespace"], "game-day");
    let c = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["image"], "registry.example.com/retrylint:0.1.0");
    let args = strings(&c["args"]);
    assert_eq!(flag_values(&args, "--clients"), ["4"]);
    assert_eq!(flag_values(&args, "--requests"), ["40"]);
    assert_eq!(flag_values(&args, "--seed"), ["7"]);
    assert_eq!(flag_values(&args, "--expect"), ["success >= 0.5"]);
    assert_eq!(flag_values(&args, "--rate"), Vec::<String>::new());
    let web = documents(&std::fs::read_to_string(out.join("services/web.yaml")).unwrap()).remove(0);
    let serve = strings(&web["spec"]["template"]["spec"]["containers"][0]["args"]);
    assert_eq!(flag_values(&serve, "--seed"), ["7"]);
    assert_eq!(
        flag_values(&serve, "--fault"),
        ["/etc/retrylint/fault.yaml"]
    );

    let out = dir.join("compose");
    let (code, _, stderr) = retrylint(&[
        "export",
        "compose",
        "examples/sre-book.yaml",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("docker compose run --rm retrylint-drive"),
        "{stderr}"
    );
    assert!(out.join("compose.yaml").exists() && out.join("topology.yaml").exists());
}

#[test]
fn bad_input_is_refused_with_exit_2_and_the_fix() {
    let dir = scratch("cli-bad");
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "kubernetes",
                "examples/ecommerce.yaml",
                "--namespace",
                "Game_Day",
            ],
            "--namespace `Game_Day` is not a valid namespace name",
        ),
        (
            &[
                "kubernetes",
                "examples/ecommerce.yaml",
                "--fault",
                "503-brust",
            ],
            "did you mean `503-burst`",
        ),
        (
            &["compose", "examples/ecommerce.yaml", "--rate", "fast"],
            "--rate `fast` is not a rate",
        ),
        (
            &[
                "compose",
                "examples/ecommerce.yaml",
                "--expect",
                "p99(nowhere) <= 1s",
            ],
            "nowhere",
        ),
        (
            &[
                "kubernetes",
                "examples/ecommerce.yaml",
                "--image",
                "has space",
            ],
            "--image `has space` is not an image reference",
        ),
        (&["kubernetes", "no/such/topology.yaml"], "no such file"),
    ];
    for (args, says) in cases {
        let mut all = vec!["export"];
        all.extend_from_slice(args);
        all.extend(["-o", out]);
        let (code, _, stderr) = retrylint(&all);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    assert!(!Path::new(out).exists(), "nothing is written on bad input");

    // A topology past what a ConfigMap can hold is refused for Kubernetes,
    // and still exported for Compose.
    let big = dir.join("big.yaml");
    let padding = "# padding to take the file past one MiB\n".repeat(30_000);
    std::fs::write(
        &big,
        format!("{padding}version: 1\nservices:\n  web: {{}}\n"),
    )
    .unwrap();
    let (code, _, stderr) = retrylint(&["export", "kubernetes", big.to_str().unwrap(), "-o", out]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("over the 1 MiB a ConfigMap can hold"),
        "{stderr}"
    );
    let (code, _, stderr) = retrylint(&["export", "compose", big.to_str().unwrap(), "-o", out]);
    assert_eq!(code, 0, "{stderr}");
}
