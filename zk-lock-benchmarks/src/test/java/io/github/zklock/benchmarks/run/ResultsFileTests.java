package io.github.zklock.benchmarks.run;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The published figures: result lines become keys that read back as written, and the charts are
 * drawn from them, leaving out a chart whose figures the run did not measure.
 */
class ResultsFileTests {

	@TempDir
	Path directory;

	@Test
	void resultLinesReadBackUnderTheirKindAndIdentity() throws Exception {
		ResultsFile results = new ResultsFile();
		results.put("run.machine", "Machine: Intel(R) Xeon(R), 2 cores; OpenJDK 17");
		results.put("ratio.template_vs_raw_mutex", "1.240");
		results.addLines(List.of(
				"HOTKEY contender=zk_lock jvms=3 threads=8 grants_per_s=24057 local_handoff_share=0.969 rounds=1",
				"REQUESTS mode=EXCLUSIVE per_cycle=3 writes=2 raw_per_cycle=3 raw_writes=2 ops=create:1,delete:1",
				"REQUESTS contended8=lock4j per_grant=5.00 writes=2.00",
				"    ASYNC_QUEUE grants=2000 kind=permit added_threads=0 heap_per_grant_bytes=2038",
				"    MEMORY library=zk-lock paths=10000 per_path_bytes=444"));
		Path file = this.directory.resolve("latest.properties");
		results.write(file, "test");

		Properties read = ResultsFile.read(file);
		assertThat(read.getProperty("run.machine")).isEqualTo("Machine: Intel(R) Xeon(R), 2 cores; OpenJDK 17");
		assertThat(read.getProperty("ratio.template_vs_raw_mutex")).isEqualTo("1.240");
		assertThat(read.getProperty("hotkey.zk_lock.3x8.grants_per_s")).isEqualTo("24057");
		assertThat(read.getProperty("requests.EXCLUSIVE.per_cycle")).isEqualTo("3");
		assertThat(read.getProperty("requests.EXCLUSIVE.ops")).isEqualTo("create:1,delete:1");
		assertThat(read.getProperty("requests.contended8_lock4j.per_grant")).isEqualTo("5.00");
		assertThat(read.getProperty("async_queue.permit.heap_per_grant_bytes")).isEqualTo("2038");
		assertThat(read.getProperty("memory.zk-lock.per_path_bytes")).isEqualTo("444");
		assertThat(Files.readAllLines(file).stream().skip(1).map((line) -> line.substring(0, line.indexOf('='))))
			.hasSize(read.size())
			.isSorted();
	}

	@Test
	void conditionRequestLinesReadBackUnderTheirNameWithTheirLockCycle() throws Exception {
		ResultsFile results = new ResultsFile();
		results.addLines(List.of(
				"REQUESTS mode=EXCLUSIVE per_cycle=3 writes=2 round_trips=2 raw_per_cycle=3 raw_writes=2 ops=create:1,delete:1,getChildren:1",
				"REQUESTS condition=signal_without_waiter per_cycle=4 writes=2 round_trips=3 lock_cycle_per_cycle=3 "
						+ "lock_cycle_writes=2 ops=create:1,delete:1,getChildren:2",
				"REQUESTS condition=await_timed_out_kept per_cycle=8 writes=4 round_trips=5.10 lock_cycle_per_cycle=0 "
						+ "lock_cycle_writes=0 ops=create:2,delete:2,getChildren:2,getData:2",
				"REQUESTS condition=await_signalled per_cycle=6 writes=2 round_trips=3.10 lock_cycle_per_cycle=3 "
						+ "lock_cycle_writes=2 ops=create:1,delete:1,getChildren:3,getData:1"));
		Path file = this.directory.resolve("latest.properties");
		results.write(file, "test");

		Properties read = ResultsFile.read(file);
		assertThat(read.getProperty("requests.EXCLUSIVE.per_cycle")).isEqualTo("3");
		assertThat(read.getProperty("requests.condition_signal_without_waiter.condition"))
			.isEqualTo("signal_without_waiter");
		assertThat(read.getProperty("requests.condition_signal_without_waiter.per_cycle")).isEqualTo("4");
		assertThat(read.getProperty("requests.condition_signal_without_waiter.lock_cycle_per_cycle")).isEqualTo("3");
		assertThat(read.getProperty("requests.condition_signal_without_waiter.ops"))
			.isEqualTo("create:1,delete:1,getChildren:2");
		assertThat(read.getProperty("requests.condition_await_timed_out_kept.per_cycle")).isEqualTo("8");
		assertThat(read.getProperty("requests.condition_await_timed_out_kept.lock_cycle_writes")).isEqualTo("0");
		assertThat(read.getProperty("requests.condition_await_signalled.writes")).isEqualTo("2");
		assertThat(read.getProperty("requests.condition_await_signalled.round_trips")).isEqualTo("3.10");
		assertThat(read.getProperty("requests.condition_await_signalled.ops"))
			.isEqualTo("create:1,delete:1,getChildren:3,getData:1");
		// Each line under a name of its own: none overwrote another's fields.
		assertThat(read.stringPropertyNames()).filteredOn((key) -> key.endsWith(".per_cycle"))
			.containsExactlyInAnyOrder("requests.EXCLUSIVE.per_cycle",
					"requests.condition_signal_without_waiter.per_cycle",
					"requests.condition_await_timed_out_kept.per_cycle", "requests.condition_await_signalled.per_cycle");
	}

	@Test
	void chartsAreDrawnFromTheFiguresThereAre() throws Exception {
		ResultsFile results = new ResultsFile();
		results.put("run.mode", "quick");
		results.put("ratio.template_vs_raw_mutex", "1.24");
		results.put("ratio.annotated_vs_raw_mutex", "1.23");
		results.addLines(List.of("REQUESTS mode=EXCLUSIVE per_cycle=3 writes=2 raw_per_cycle=3 raw_writes=2",
				"HOTKEY contender=zk_lock jvms=3 threads=8 grants_per_s=24057",
				"HOTKEY contender=raw_mutex jvms=3 threads=8 grants_per_s=968"));
		Path file = this.directory.resolve("latest.properties");
		results.write(file, "test");
		Path charts = this.directory.resolve("charts");
		Charts.main(new String[] { file.toString(), charts.toString() });

		assertThat(charts.resolve("figures.adoc")).content()
			.contains(":ratio-template-vs-raw-mutex: 1.24\n")
			.contains(":hotkey-zk-lock-3x8-grants-per-s: 24057\n")
			.contains(":requests-exclusive-per-cycle: 3\n");
		// No async ratio in this run: its chart is left out.
		assertThat(charts.resolve("async-vs-sync.png")).doesNotExist();
		for (String name : List.of("lock-kinds.png", "hot-key.png", "requests.png")) {
			BufferedImage image = ImageIO.read(charts.resolve(name).toFile());
			assertThat(image).as(name).isNotNull();
			assertThat(image.getWidth()).as(name).isEqualTo(880);
			assertThat(image.getHeight()).as(name).isEqualTo(480);
		}
	}

}
