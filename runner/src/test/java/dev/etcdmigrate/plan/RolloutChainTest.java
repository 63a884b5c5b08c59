package dev.etcdmigrate.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.event.DecisionEvent.PlannedLeg;
import dev.etcdmigrate.log.Json;
import dev.etcdmigrate.version.DataVersion;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The chain a cluster member walks as `plan` and `inspect` show it: per leg its lines, the plan's steps, the patch
 * floors, the etcd it serves, who decides the restart and what it waits for; asserted on the fields, in text and
 * JSON alike.
 */
class RolloutChainTest {

    private static final String KEY = "/etcd-migrate/rollout/restart";
    private static final Planner PLANNER = new Planner(Catalog.bundled());
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Plan plan(String current, String target) throws RefusedTransitionException {
        return RollingUpgradePolicy.check(PLANNER.plan(DataVersion.parse(current), DataVersion.parse(target)), 3);
    }

    private static List<PlannedLeg> legs(String current, String target) throws RefusedTransitionException {
        return RolloutChain.of(plan(current, target)).planned(KEY);
    }

    @Test
    void upThreeMinors() throws Exception {
        List<PlannedLeg> legs = legs("3.4.23/etcd3", "3.7.3/etcd3");
        assertEquals(3, legs.size());
        assertEquals(
                List.of("3.4", "3.5", "3.6"),
                legs.stream().map(PlannedLeg::from).toList());
        assertEquals(
                List.of("3.5", "3.6", "3.7"), legs.stream().map(PlannedLeg::to).toList());
        assertEquals(
                List.of("3.5.35", "3.6.16", "3.7.3"),
                legs.stream().map(PlannedLeg::serves).toList());
        assertEquals(List.of(1, 2, 3), legs.stream().map(PlannedLeg::firstStep).toList());
        assertEquals(List.of(1, 2, 3), legs.stream().map(PlannedLeg::lastStep).toList());
        assertTrue(legs.stream().allMatch(l -> l.direction().equals("upgrade")));
        assertTrue(legs.stream().allMatch(l -> l.downgradeJob().isEmpty()));
        assertTrue(legs.stream().allMatch(l -> l.patchFloors().isEmpty()), "3.5.35 and 3.6.16 are above the floors");
        assertEquals(
                List.of("at-once", "restart-record", "restart-record"),
                legs.stream().map(PlannedLeg::restart).toList());
        assertTrue(legs.stream().allMatch(l -> l.recordKey().equals(KEY)));
        assertEquals(
                List.of("serve", "serve", "exec"),
                legs.stream().map(PlannedLeg::then).toList());
        assertEquals(
                List.of("3.5", "3.6", ""),
                legs.stream().map(PlannedLeg::waitsForClusterVersion).toList());
    }

    @Test
    void thePatchFloorsRideWithTheMinorTheyPrepare() throws Exception {
        List<PlannedLeg> legs = legs("3.5.21/etcd3", "3.7.3/etcd3");
        assertEquals(2, legs.size());
        assertEquals(1, legs.get(0).firstStep(), "the floor and the step to 3.6");
        assertEquals(2, legs.get(0).lastStep());
        assertEquals(1, legs.get(0).patchFloors().size());
        assertTrue(
                legs.get(0).patchFloors().getFirst().startsWith("3.5."),
                legs.get(0).toString());
        assertEquals(3, legs.get(1).firstStep());
        assertEquals(3, legs.get(1).lastStep());
        assertEquals(List.of(), legs.get(1).patchFloors());
        Plan plan = plan("3.5.21/etcd3", "3.7.3/etcd3");
        assertEquals("patch-floor", plan.steps().getFirst().kind());
        assertEquals(
                plan.steps().getFirst().result().version().toString(),
                legs.get(0).patchFloors().getFirst());
    }

    @Test
    void downTwoMinorsOneDowngradeJobEach() throws Exception {
        List<PlannedLeg> legs = legs("3.7.3/etcd3", "3.5.35/etcd3");
        assertEquals(2, legs.size());
        assertEquals(List.of("3.7", "3.6"), legs.stream().map(PlannedLeg::from).toList());
        assertEquals(List.of("3.6", "3.5"), legs.stream().map(PlannedLeg::to).toList());
        assertEquals(
                List.of("3.6", "3.5"),
                legs.stream().map(PlannedLeg::downgradeJob).toList());
        assertEquals(
                List.of("3.6.16", "3.5.35"),
                legs.stream().map(PlannedLeg::serves).toList());
        assertTrue(legs.stream().allMatch(l -> l.direction().equals("downgrade")));
        assertEquals(
                List.of("at-once", "restart-record"),
                legs.stream().map(PlannedLeg::restart).toList());
        assertEquals(
                List.of("serve", "exec"), legs.stream().map(PlannedLeg::then).toList());
        assertEquals("3.6", legs.get(0).waitsForClusterVersion());
    }

    @Test
    void oneMinorOrAPatchIsNoChain() throws Exception {
        assertEquals(List.of(), legs("3.6.16/etcd3", "3.7.3/etcd3"));
        assertEquals(List.of(), legs("3.5.21/etcd3", "3.6.16/etcd3"), "a floor and one minor: one restart");
        assertEquals(List.of(), legs("3.5.21/etcd3", "3.5.35/etcd3"));
    }

    /** The plan's JSON carries the legs as fields; the text names each leg's lines, etcd, steps and restart. */
    @Test
    void thePlanShowsTheChainInJsonAndText() throws Exception {
        Plan plan = plan("3.4.23/etcd3", "3.7.3/etcd3");
        DecisionEvent.PlanMade made =
                plan.event(1 << 20, "", RolloutChain.of(plan).planned(KEY));
        JsonNode json = JSON.readTree(Json.object(made));
        assertEquals(3, json.path("steps").size());
        JsonNode legs = json.path("legs");
        assertEquals(3, legs.size());
        JsonNode second = legs.get(1);
        assertEquals(2, second.path("index").asInt());
        assertEquals("3.5", second.path("from").asText());
        assertEquals("3.6", second.path("to").asText());
        assertEquals("3.6.16", second.path("serves").asText());
        assertEquals("restart-record", second.path("restart").asText());
        assertEquals(KEY, second.path("recordKey").asText());
        assertEquals("serve", second.path("then").asText());
        assertEquals("3.6", second.path("waitsForClusterVersion").asText());
        assertEquals(2, second.path("firstStep").asInt());
        assertEquals(2, second.path("lastStep").asInt());
        assertEquals("exec", legs.get(2).path("then").asText());

        List<String> lines = made.message().lines().toList();
        List<String> legLines =
                lines.stream().filter(l -> l.strip().startsWith("leg ")).toList();
        assertEquals(3, legLines.size(), made.message());
        for (int i = 0; i < 3; i++) {
            String line = legLines.get(i);
            PlannedLeg leg = made.legs().get(i);
            assertTrue(line.contains(leg.from() + " -> " + leg.to()), line);
            assertTrue(line.contains(leg.serves()), line);
            assertTrue(line.contains(i == 0 ? "at once" : KEY), line);
        }
        assertTrue(legLines.getFirst().contains("until every member runs 3.5"), legLines.getFirst());
    }

    @Test
    void aLoneMembersPlanHasNoLegs() throws Exception {
        Plan plan = PLANNER.plan(DataVersion.parse("3.4.23/etcd3"), DataVersion.parse("3.7.3/etcd3"));
        JsonNode json = JSON.readTree(Json.object(plan.event(0, "")));
        assertEquals(0, json.path("legs").size());
        assertTrue(plan.event(0, "").message().lines().noneMatch(l -> l.strip().startsWith("leg ")));
    }
}
