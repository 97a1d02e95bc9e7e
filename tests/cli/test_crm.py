"""`leadrelay crm-stages`: the CRM's stage ids beside what the mapping file makes of them."""

from helpers import leadrelay


def test_hubspot_stages_are_listed_with_their_events_and_the_unmapped_named(env, graph):
    listed = leadrelay("crm-stages", "hubspot")
    assert listed.returncode == 0, listed.stderr
    lines = {line.split()[0]: line.split()[1] for line in listed.stdout.splitlines() if line and line[0] != "\n"}
    assert lines["closedwon"] == "Purchase" and lines["qualifiedtobuy"] == "QualifiedLead"
    assert lines["closedlost"] == "unmapped" and "add them to [crm.hubspot.stages]" in listed.stdout
    assert graph.calls("pipelines")[0]["headers"]["Authorization"] == "Bearer hubspot-api-token"


def test_pipedrive_stages_carry_the_pipelines_name(env, graph):
    listed = leadrelay("crm-stages", "pipedrive")
    assert "3  Schedule" in " ".join(listed.stdout.split("  ")) or "Schedule" in listed.stdout
    assert "(Sales pipeline)" in listed.stdout and "won" in listed.stdout
    ids = [line.split()[0] for line in listed.stdout.splitlines() if line.strip().endswith(")")]
    assert ids == ["2", "3", "won", "lost"]  # the stages, never the pipeline itself (id 1)


def test_a_refused_token_says_so_and_exits_1(env, graph):
    graph.crm_revoked.add("pipedrive-api-token")
    listed = leadrelay("crm-stages", "pipedrive")
    assert listed.returncode == 1 and "pipedrive refused" in listed.stderr
