"""deploy/ as far as a machine without a Docker engine can check it: the compose file's services,
commands, health checks and required secrets; the Dockerfile's stages, user and health check; and
`nginx -t` on deploy/nginx.conf as bench/cluster.py runs it (when nginx is installed)."""

from __future__ import annotations

from bench.cluster import deploy_problems


def test_deploy_files_hold_together() -> None:
    problems, checked, _ = deploy_problems()
    assert not problems, problems
    assert len(checked) >= 3
