"""The harness itself: it must see every edge kind, and catch a missing dependency."""

import textwrap

import pytest

from tests.harness import ProgramFailed, run_program

PROGRAM = textwrap.dedent(
    """
    import pulumi
    import pulumi_aws as aws

    class Box(pulumi.ComponentResource):
        def __init__(self, name, opts=None):
            super().__init__("test:index:Box", name, None, opts)
            self.queue = aws.sqs.Queue(f"{name}-queue", opts=pulumi.ResourceOptions(parent=self))
            self.register_outputs({})

    config = pulumi.Config()
    base = aws.sqs.Queue("base")
    box = Box("box", opts=pulumi.ResourceOptions(depends_on=[base]))
    by_property = aws.sqs.Queue("by-property", name=base.name.apply(lambda n: n + "-2"))
    on_component = aws.sqs.Queue("on-component", opts=pulumi.ResourceOptions(depends_on=[box]))
    loose = aws.sqs.Queue("loose")
    with_secret = aws.sqs.Queue("with-secret", tags={"token": pulumi.Output.secret("hunter2")})
    if config.get_bool("fail"):
        raise pulumi.RunError("stopped on purpose")
    pulumi.export("plain", base.name)
    pulumi.export("hidden", pulumi.Output.secret("s"))
    """
)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "__main__.py").write_text(PROGRAM)
    (tmp_path / "Pulumi.test.yaml").write_text("config:\n  aws:region: us-east-1\n")
    return tmp_path


def test_edges_of_every_kind(project):
    recording = run_program("test", project_dir=project)
    base = recording.one("aws:sqs/queue:Queue", "base")
    box = recording.one("test:index:Box", "box")
    inner = recording.one("aws:sqs/queue:Queue", "box-queue")
    assert inner.parent == box.urn
    assert recording.depends_on(box, base, via=["dependency"])
    # The component's own dependency holds for its children through the parent edge.
    assert recording.depends_on(inner, base)
    assert not recording.depends_on(inner, base, via=["dependency"])
    assert recording.depends_on(recording.named("by-property"), base, via=["property"])
    # depends_on a component is recorded as edges to its children; both count.
    on_component = recording.named("on-component")
    assert inner.urn in on_component.dependencies
    assert recording.depends_on(on_component, box)


def test_a_missing_dependency_is_caught(project):
    recording = run_program("test", project_dir=project)
    assert not recording.depends_on(recording.named("loose"), recording.named("base"))
    order = recording.deletion_order()
    assert order.index(recording.named("by-property")) < order.index(recording.named("base"))


def test_secrets_and_outputs(project):
    recording = run_program("test", project_dir=project)
    assert recording.named("with-secret").input("tags") == {"token": "hunter2"}
    assert recording.outputs["plain"].startswith("base-")
    assert recording.secret_outputs == {"hidden"}


def test_lookup_errors_name_what_exists(project):
    recording = run_program("test", project_dir=project)
    with pytest.raises(LookupError, match="box-queue"):
        recording.one("aws:sqs/queue:Queue")


def test_run_error_keeps_what_was_registered(project):
    with pytest.raises(ProgramFailed, match="stopped on purpose") as failure:
        run_program("test", {"fail": "true"}, project_dir=project)
    assert failure.value.recording.named("loose")


def test_runs_are_isolated(project):
    first = run_program("test", project_dir=project)
    second = run_program("test", project_dir=project)
    assert len(first.resources) == len(second.resources)
    assert {r.urn for r in first.resources} == {r.urn for r in second.resources}
