package io.github.zklock.benchmarks.run;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The scale scenario with a few hundred keys (a warm-up of 50 keys per JVM, layout and floor; JVMs
 * with the client compiler alone, which start in half the time): its server JVM, three application
 * JVMs, both layouts, the floor, the heap, meter and znode lines;
 * and the meter count of one application in this JVM, which must find the meters a request named
 * after its key makes (so that its zero means none).
 */
class ScaleScenarioTests {

	@TempDir
	Path workDir;

	@Test
	void locksEveryKeyOfBothLayoutsOnceAndReportsHeapMetersAndZnodes() {
		BenchMain.Settings settings = BenchMain.Settings.parse(new String[] { "--scale", "--scale-keys", "300",
				"--scale-threads", "2", "--scale-warm-up-keys", "50", "--scale-cache-capacity", "200",
				"--scale-reap-interval-ms", "1000",
				"--scale-reap-wait-seconds", "60", "--scale-server-heap", "256m", "--scale-client-compiler", "--work-dir",
				this.workDir.toString() });
		List<String> lines = assertTimeoutPreemptively(Duration.ofMinutes(8), () -> ScaleScenario.run(settings));

		assertThat(lines).filteredOn((line) -> line.startsWith("SCALE_SERVER "))
			.singleElement()
			.satisfies((line) -> assertThat(fields(line)).containsEntry("container_check_interval_ms", "1000")
				.containsEntry("container_max_per_minute", "6000000"));
		for (String layout : ScaleScenario.LAYOUTS) {
			assertThat(lines).filteredOn((line) -> line.startsWith("SCALE layout=" + layout + " "))
				.singleElement()
				.satisfies((line) -> assertThat(fields(line)).containsEntry("keys", "300")
					.containsEntry("jvms", "3")
					.containsEntry("threads", "2")
					.containsKeys("cycles_per_s", "floor_per_s", "ratio", "raw_curator_per_s", "vs_raw_curator"));
			assertThat(lines).filteredOn((line) -> line.startsWith("SCALE_FLOOR layout=" + layout + " "))
				.singleElement()
				.satisfies((line) -> assertThat(fields(line)).containsEntry("keys", "300"));
			assertThat(lines).filteredOn((line) -> line.startsWith("SCALE_RAW_CURATOR layout=" + layout + " "))
				.singleElement()
				.satisfies((line) -> assertThat(fields(line)).containsEntry("keys", "300").containsKey("cycles_per_s"));
			List<Map<String, String>> heap = lines.stream()
				.filter((line) -> line.startsWith("SCALE_HEAP layout=" + layout + " "))
				.map(ScaleScenarioTests::fields)
				.toList();
			assertThat(heap).hasSize(3)
				.allSatisfy((jvm) -> assertThat(Long.parseLong(jvm.get("cached"))).isBetween(1L, 200L));
			List<Map<String, String>> meters = lines.stream()
				.filter((line) -> line.startsWith("SCALE_METERS layout=" + layout + " "))
				.map(ScaleScenarioTests::fields)
				.toList();
			assertThat(meters).hasSize(3).allSatisfy((jvm) -> {
				assertThat(jvm).containsEntry("per_key_meters", "0").containsEntry("per_key_observation_tag_values", "0");
				assertThat(Integer.parseInt(jvm.get("zk_lock_meters"))).isPositive();
			});
			List<Map<String, String>> znodes = lines.stream()
				.filter((line) -> line.startsWith("SCALE_ZNODES layout=" + layout + " "))
				.map(ScaleScenarioTests::fields)
				.toList();
			assertThat(znodes).extracting((figures) -> figures.get("when"))
				.containsExactly("start", "after_run", "after_reaper");
			long start = Long.parseLong(znodes.get(0).get("znode_count"));
			assertThat(Long.parseLong(znodes.get(2).get("znode_count"))).isLessThanOrEqualTo(start);
		}
	}

	@Test
	void countsTheMetersOfRequestsNamedAfterTheirKeysAndNoneOfTheAnnotation() throws Exception {
		try (TestingServer server = new TestingServer()) {
			Map<String, String> keyNamed = meters(server, "template-key");
			// 40 keys, each the name of its own timers.
			assertThat(Integer.parseInt(keyNamed.get("per_key_meters"))).isGreaterThanOrEqualTo(40);
			assertThat(Integer.parseInt(keyNamed.get("per_key_observation_tag_values"))).isGreaterThanOrEqualTo(40);
			Map<String, String> annotated = meters(server, "annotation");
			assertThat(annotated).containsEntry("per_key_meters", "0").containsEntry("per_key_observation_tag_values", "0");
			assertThat(Integer.parseInt(annotated.get("zk_lock_meters"))).isPositive();
		}
	}

	private static Map<String, String> meters(TestingServer server, String api) throws Exception {
		ScaleWorker worker = new ScaleWorker(1, server.getConnectString(), 100, api, 10);
		try {
			worker.execute(new String[] { "RUN", "flat", "0", "20", "2" });
			worker.execute(new String[] { "RUN", "deep", "0", "20", "2" });
			return fields(worker.execute(new String[] { "METERS" }));
		}
		finally {
			worker.close();
		}
	}

	private static Map<String, String> fields(String line) {
		return HotKeyWorker.fields(line);
	}

}
