# The image `retrylint export kubernetes|compose` names by default:
#   docker build -t retrylint:latest .
# For a cluster, push it where the nodes pull from and export with
# `--image registry.example.com/retrylint:0.1.0`.
#
# Stage 1 builds the release binary with the locked dependencies; stage 2 is
# distroless (glibc and CA certificates, no shell, no package manager) and runs
# it as the image's non-root user, 65532, which the manifests name.
#
# The binary is the entrypoint, so every command works as it does on a shell;
# /work is the working directory, to mount a repository on:
#   docker run --rm -v "$PWD:/work" retrylint check topology.yaml
#   docker run --rm -v "$PWD:/work" retrylint report topology.yaml -o review.html
#   docker run --rm -p 8080:8080 -p 9090:9090 -v "$PWD:/work" retrylint \
#     serve topology.yaml --service db --listen 0.0.0.0:8080 --admin 0.0.0.0:9090

ARG RUST_VERSION=1.95

FROM rust:${RUST_VERSION}-bookworm AS build
WORKDIR /src
# Everything `cargo build` reads: the manifest names the benches and the
# workspace's crates (the allocator, the YAML reader), and build.rs embeds the
# presets and fault scenarios.
COPY Cargo.toml Cargo.lock build.rs ./
COPY crates crates
COPY src src
COPY benches benches
COPY policies policies
COPY faults faults
RUN cargo build --release --locked --bin retrylint \
 && strip target/release/retrylint

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/retrylint /usr/local/bin/retrylint
WORKDIR /work
USER 65532:65532
# 8080: the service's tier; 9090: /metrics, /retrylint/*, /healthz.
EXPOSE 8080 9090
ENTRYPOINT ["retrylint"]
CMD ["--help"]
