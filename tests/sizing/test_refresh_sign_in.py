"""`catalog refresh --stack/--profile`: signing in as a stack's AWS provider does, and the account's
zone IDs in the refreshed file. Real boto3 sessions over temporary AWS CLI files, stubbed AWS
responses (no network)."""

import datetime as dt
import json
from dataclasses import replace

import pytest

boto3 = pytest.importorskip("boto3", reason="boto3 is optional; the refresh tests need it")
from botocore.stub import Stubber  # noqa: E402

from sizing import cli  # noqa: E402
from sizing.commands.catalog import refresh_sign_in  # noqa: E402
from sizing.errors import SizingInputError  # noqa: E402
from sizing.karpenter.catalog import read_catalog  # noqa: E402
from sizing.karpenter.catalog_refresh import (  # noqa: E402
    ROLE_SESSION_NAME,
    AwsSignIn,
    PermissionDenied,
    aws_session,
    caller_account,
    zone_ids_by_name,
)

ROLE = "arn:aws:iam::111122223333:role/deployer"
STACK = """\
config:
  aws:region: ap-northeast-1
  aws:profile: team
  aws:assumeRoles:
    - roleArn: arn:aws:iam::111122223333:role/deployer
  aws:sharedConfigFiles: [/etc/aws/team-config]
  aws:sharedCredentialsFiles: [/etc/aws/team-credentials]
  eks-autoscaling:clusterName: blue
"""
ZONES = {
    "AvailabilityZones": [
        {"ZoneName": "ap-northeast-1a", "ZoneId": "apne1-az4", "State": "available", "ZoneType": "availability-zone"},
        {"ZoneName": "ap-northeast-1c", "ZoneId": "apne1-az1", "State": "available", "ZoneType": "availability-zone"},
    ]
}
ZONE_PARAMS: dict[str, object] = {}


def test_the_stacks_aws_settings_are_read_from_its_file(tmp_path):
    (tmp_path / "Pulumi.blue.yaml").write_text(STACK)
    region, sign_in = refresh_sign_in("blue", None, tmp_path)
    assert region == "ap-northeast-1"
    assert sign_in == AwsSignIn("team", ROLE, "/etc/aws/team-config", "/etc/aws/team-credentials")
    # --profile wins over the stack's.
    assert refresh_sign_in("blue", "ops", tmp_path)[1].profile == "ops"
    assert refresh_sign_in(None, "ops", tmp_path) == (None, AwsSignIn(profile="ops"))


@pytest.mark.parametrize(
    "stack_text, fragments",
    [
        (None, ["--stack blue", "Pulumi.blue.yaml"]),
        ("name: x\n", ["has no `config:` mapping"]),
        (
            "config:\n  aws:assumeRoles: [{roleArn: a}, {roleArn: b}]\n",
            ["`aws:assumeRoles` must be a list of at most one entry"],
        ),
        ("config:\n  aws:profile: [a]\n", ["`aws:profile` must be text"]),
    ],
)
def test_a_stack_file_without_usable_settings_is_refused(tmp_path, stack_text, fragments):
    if stack_text is not None:
        (tmp_path / "Pulumi.blue.yaml").write_text(stack_text)
    with pytest.raises(SizingInputError) as error:
        refresh_sign_in("blue", None, tmp_path)
    for fragment in fragments:
        assert fragment in str(error.value)


def test_the_session_reads_the_stacks_own_files_and_profile(tmp_path, monkeypatch):
    for name in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = tmp_path / "team-config"
    config.write_text("[profile team]\nregion = eu-west-1\n")
    credentials = tmp_path / "team-credentials"
    credentials.write_text("[team]\naws_access_key_id = AKIATEAM\naws_secret_access_key = secret\n")
    session = aws_session(AwsSignIn("team", None, str(config), str(credentials)))
    assert session.profile_name == "team"
    assert session.get_credentials().access_key == "AKIATEAM"
    assert session.region_name == "eu-west-1"


def test_a_profile_the_files_lack_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = tmp_path / "config"
    config.write_text("[profile other]\n")
    with pytest.raises(SizingInputError, match=r"profile 'team' is in none of the AWS CLI's files \(.*config"):
        aws_session(AwsSignIn("team", None, str(config), None))


def test_the_stacks_role_is_assumed():
    sts = boto3.client("sts", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing")
    stub = Stubber(sts)
    expires = dt.datetime(2026, 8, 3, 10, 0, tzinfo=dt.UTC)
    stub.add_response(
        "assume_role",
        {
            "Credentials": {
                "AccessKeyId": "ASIAROLEEXAMPLE12",
                "SecretAccessKey": "role-secret",
                "SessionToken": "role-token",
                "Expiration": expires,
            }
        },
        {"RoleArn": ROLE, "RoleSessionName": ROLE_SESSION_NAME},
    )
    with stub:
        session = aws_session(AwsSignIn(role_arn=ROLE), sts_client=sts)
    credentials = session.get_credentials()
    assert (credentials.access_key, credentials.token) == ("ASIAROLEEXAMPLE12", "role-token")


def _ec2():
    return boto3.client("ec2", region_name="ap-northeast-1", aws_access_key_id="t", aws_secret_access_key="t")


def test_zone_ids_come_from_the_signed_in_account():
    ec2 = _ec2()
    stub = Stubber(ec2)
    stub.add_response("describe_availability_zones", ZONES, ZONE_PARAMS)
    with stub:
        assert zone_ids_by_name(ec2, "ap-northeast-1") == {
            "ap-northeast-1a": "apne1-az4",
            "ap-northeast-1c": "apne1-az1",
        }
    # Denied, the refresh leaves the map out and says which permission it lacked.
    stub.add_client_error("describe_availability_zones", "UnauthorizedOperation", expected_params=ZONE_PARAMS)
    with stub, pytest.raises(PermissionDenied) as denied:
        zone_ids_by_name(ec2, "ap-northeast-1")
    assert denied.value.permission == "ec2:DescribeAvailabilityZones"


def test_the_account_comes_from_sts_and_is_left_out_when_sts_does_not_answer():
    sts = boto3.client("sts", region_name="ap-northeast-1", aws_access_key_id="t", aws_secret_access_key="t")
    stub = Stubber(sts)
    stub.add_response("get_caller_identity", {"Account": "111122223333", "Arn": ROLE, "UserId": "AROAEXAMPLE"}, {})
    stub.add_client_error("get_caller_identity", "AccessDenied", http_status_code=403)
    with stub:
        assert caller_account(sts) == "111122223333"
        assert caller_account(sts) is None


def test_the_cli_signs_in_as_the_stack_and_prints_the_zone_ids(tmp_path, capsys, monkeypatch):
    import sizing.karpenter.catalog_refresh as refresh_module
    from sizing.karpenter.catalog_refresh import RefreshedCatalog

    (tmp_path / "Pulumi.blue.yaml").write_text(STACK)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("sizing.commands.catalog",))
    seen = {}

    class Session:
        """Stands for the signed-in session the refresh is handed."""

    def fake_session(sign_in):
        seen["sign_in"] = sign_in
        return Session()

    bundled = read_catalog(None)

    def fake_refresh(region, session=None):
        seen["refresh"] = (region, isinstance(session, Session))
        info = replace(
            bundled.info,
            region=region,
            zone_ids={"ap-northeast-1a": "apne1-az4"},
            account="111122223333",
        )
        return RefreshedCatalog(bundled.instance_types[:2], info)

    monkeypatch.setattr(refresh_module, "aws_session", fake_session)
    monkeypatch.setattr(refresh_module, "refresh_catalog", fake_refresh)
    assert cli.main(["catalog", "refresh", "--stack", "blue", "--profile", "ops"]) == 0
    assert seen["sign_in"] == AwsSignIn("ops", ROLE, "/etc/aws/team-config", "/etc/aws/team-credentials")
    # The stack's aws:region is the region refreshed.
    assert seen["refresh"] == ("ap-northeast-1", True)
    out = capsys.readouterr().out
    assert "zones keyed by zone ID; the names of account 111122223333: ap-northeast-1a (apne1-az4)" in out
    written = json.loads((tmp_path / "catalog-ap-northeast-1.json").read_text())
    assert written["formatVersion"] == 3 and written["account"] == "111122223333"
    assert written["zones"] == [{"id": "apne1-az4", "name": "ap-northeast-1a"}]


def test_without_a_region_or_a_stack_the_refresh_says_what_it_needs(capsys, monkeypatch):
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("sizing.commands.catalog",))
    assert cli.main(["catalog", "refresh"]) == 2
    assert "catalog refresh needs --region R, or --stack NAME" in capsys.readouterr().err
