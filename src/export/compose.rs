//! A Docker Compose project: one Compose service per topology service
//! running `retrylint serve`, with a health check on `/healthz`, and the
//! driver `retrylint drive` depending on every one of them being healthy.
//! The topology and fault files sit beside `compose.yaml` and are mounted as
//! Compose configs.
//!
//! The driver has a profile of its own, so `docker compose up -d --wait`
//! brings the services up and waits for their health, and
//! `docker compose run --rm retrylint-drive` then prints the report alone on
//! stdout. Resources follow `sizing`'s rule as reservations, with the memory
//! limit and no CPU limit, as on Kubernetes. The run's token is in the
//! environment of every service and the driver; `compose.yaml` holding it
//! is written readable by its owner only.

use super::command::{self, ADMIN_PORT, HEALTH_PATH};
use super::sizing::Resources;
use super::yaml::{Yaml, document, map, strs};
use super::{Plan, RUN_AS, Target};

pub(crate) const COMPOSE_FILE: &str = "compose.yaml";

/// `compose.yaml` and the files it mounts.
pub(crate) fn files(p: &Plan) -> Vec<(String, String)> {
    let mut services = map();
    for (i, name) in p.names.iter().enumerate() {
        services = services.put(name, serve(p, i));
    }
    services = services.put(&p.driver, drive(p));
    let root = map()
        .put("name", p.instance())
        .put("services", services)
        .put(
            "configs",
            map()
                .put(
                    "topology",
                    map().put("file", format!("./{}", command::TOPOLOGY_FILE)),
                )
                .put(
                    "fault",
                    map().put("file", format!("./{}", command::FAULT_FILE)),
                ),
        )
        .build();
    let head = p.header(
        Target::Compose,
        &format!(
            "Start the services and wait for their health: `docker compose up -d --wait`.\nRun the load and print the report: `docker compose run --rm {}`.\nStop and remove everything: `docker compose down`.",
            p.driver
        ),
    );
    vec![
        (COMPOSE_FILE.to_owned(), document(&head, &root)),
        (
            command::TOPOLOGY_FILE.to_owned(),
            p.x.topology_text.text.clone(),
        ),
        (command::FAULT_FILE.to_owned(), p.x.fault_text.text.clone()),
    ]
}

fn configs() -> Yaml {
    Yaml::Seq(
        [
            ("topology", command::topology_path()),
            ("fault", command::fault_path()),
        ]
        .into_iter()
        .map(|(source, target)| map().put("source", source).put("target", target).build())
        .collect(),
    )
}

fn deploy(r: &Resources, what: &str) -> Yaml {
    let (cpus, memory, memory_limit) = r.compose();
    map()
        .put(
            "resources",
            map()
                .comment(&format!("Sized from the load: {}.", r.explain(what)))
                .put("limits", map().put("memory", memory_limit))
                .put(
                    "reservations",
                    map().put("cpus", cpus).put("memory", memory),
                ),
        )
        .build()
}

fn labels(p: &Plan, component: &str, service: Option<&str>) -> Yaml {
    map()
        .put("app.kubernetes.io/part-of", "retrylint")
        .put("app.kubernetes.io/instance", p.instance())
        .put("app.kubernetes.io/component", component)
        .put_some("retrylint/service", service)
        .build()
}

/// The run's token, which start and stop on every admin port need.
fn environment(p: &Plan) -> Yaml {
    map().put(command::TOKEN_ENV, p.x.token.expose()).build()
}

fn serve(p: &Plan, i: usize) -> Yaml {
    let svc = &p.x.topology.services[i];
    let mut test = vec!["CMD".to_owned(), "retrylint".to_owned()];
    test.extend(command::health_check(&format!(
        "http://127.0.0.1:{ADMIN_PORT}{HEALTH_PATH}"
    )));
    map()
        .put("image", &p.x.image)
        .put("command", strs(p.serve_args(i, &[p.names[i].clone()])))
        .put("environment", environment(p))
        .put("configs", configs())
        .put("labels", labels(p, "serve", Some(&svc.name)))
        .put(
            "healthcheck",
            map()
                .put("test", strs(test))
                .put("interval", "2s")
                .put("timeout", "5s")
                .put("retries", 30)
                .put("start_period", "5s"),
        )
        .put("user", format!("{RUN_AS}:{RUN_AS}"))
        .put("read_only", true)
        .put("deploy", deploy(&p.sizing.services[i], "requests"))
        .build()
}

fn drive(p: &Plan) -> Yaml {
    let mut depends = map();
    for name in &p.names {
        depends = depends.put(name, map().put("condition", "service_healthy"));
    }
    map()
        .put("image", &p.x.image)
        .put("command", strs(p.drive_args()))
        .put("environment", environment(p))
        .put("configs", configs())
        .put("labels", labels(p, "drive", None))
        .put("depends_on", depends)
        .put("profiles", strs(["drive"]))
        .put("restart", "no")
        .put("user", format!("{RUN_AS}:{RUN_AS}"))
        .put("read_only", true)
        .put("deploy", deploy(&p.sizing.driver, "user requests"))
        .build()
}
