"""Turns an Envoy Gateway translator test input (internal/gatewayapi/testdata/*.in.yaml:
one map of resource lists) into the multi-document YAML `kubectl apply` takes: the
items of its route and policy lists, each de-indented by two columns, unchanged
otherwise. Usage: python3 split_translator_input.py < X.in.yaml > X.yaml"""
import sys

KEEP = ("grpcRoutes:", "httpRoutes:", "backendTrafficPolicies:")
docs, current, keep = [], None, False
for line in sys.stdin.read().splitlines():
    if line and not line[0].isspace() and not line.startswith("-"):
        keep = line.strip() in KEEP
        current = None
        continue
    if not keep:
        continue
    if line.startswith("- "):
        current = [line[2:]]
        docs.append(current)
    elif current is not None:
        current.append(line[2:] if line.startswith("  ") else line)
print("\n---\n".join("\n".join(d) for d in docs))
