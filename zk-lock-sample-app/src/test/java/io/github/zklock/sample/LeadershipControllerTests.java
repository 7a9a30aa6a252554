package io.github.zklock.sample;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import io.github.zklock.Leadership;
import io.github.zklock.test.AutoConfigureEmbeddedZooKeeper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link LeadershipController}, through the whole application on its embedded ZooKeeper:
 * alone in a group, the instance leads it, and leads it again after yielding (nobody else queues);
 * a group name ZooKeeper refuses answers 400. (The configuration of {@code StockControllerTests},
 * so that the context is shared: the scheduled report's leader-only job leads a group of its own.)
 */
@SpringBootTest(properties = { "zk.lock.default-wait-time=1s", "sample.instance-id=controller-tests" })
@AutoConfigureEmbeddedZooKeeper
@AutoConfigureMockMvc
class LeadershipControllerTests {

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private Leadership leadership;

	@Test
	void tellsAndYieldsTheLeadershipOfAGroup() throws Exception {
		assertThat(this.leadership.awaitLeadership("controller-group", Duration.ofSeconds(10))).isTrue();
		assertThat(this.mvc.get().uri("/api/leadership/{group}", "controller-group")).hasStatusOk()
			.bodyJson()
			.isLenientlyEqualTo("{\"group\": \"controller-group\", \"leader\": true}");
		long token = this.leadership.term("controller-group").orElseThrow().fencingToken();

		assertThat(this.mvc.post().uri("/api/leadership/{group}/yield", "controller-group")).hasStatusOk();
		// Alone in the group: it leads again, in a new term with a higher token.
		assertThat(this.leadership.awaitLeadership("controller-group", Duration.ofSeconds(10))).isTrue();
		assertThat(this.leadership.term("controller-group").orElseThrow().fencingToken()).isGreaterThan(token);
	}

	@Test
	void invalidGroupNameIsBadRequest() {
		assertThat(this.mvc.get().uri("/api/leadership/{group}", "..")).hasStatus(HttpStatus.BAD_REQUEST);
		assertThat(this.mvc.post().uri("/api/leadership/{group}/yield", "..")).hasStatus(HttpStatus.BAD_REQUEST);
	}

}
