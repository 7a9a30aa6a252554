package io.github.zklock.sample.security;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.actuate.ZkLocksEndpoint;
import io.github.zklock.test.AutoConfigureEmbeddedZooKeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.LIST;
import static org.assertj.core.api.InstanceOfAssertFactories.MAP;
import static org.awaitility.Awaitility.await;

/**
 * {@link ActuatorSecurityConfiguration} over real HTTP, the application on a random port and its
 * embedded ZooKeeper: without credentials 401, the wrong role 403, the right one 200; a revocation
 * by admin leaves an audit event naming admin, the key and the holder it ended; health stays open
 * without details; the business endpoints stay open (no credentials, no CSRF token).
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "server.address=127.0.0.1", "sample.instance-id=security-tests", "sample.report.enabled=false",
				"sample.security.operator-password=operator-secret", "sample.security.admin-password=admin-secret",
				"management.endpoint.health.probes.enabled=true" })
@AutoConfigureEmbeddedZooKeeper
class ActuatorSecurityTests {

	private static final Duration BOUND = Duration.ofSeconds(10);

	private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {
	};

	@LocalServerPort
	private int port;

	@Autowired
	private LockTemplate lockTemplate;

	private RestClient http;

	@BeforeEach
	void createClient() {
		JdkClientHttpRequestFactory requestFactory = new JdkClientHttpRequestFactory(
				HttpClient.newBuilder().connectTimeout(BOUND).build());
		requestFactory.setReadTimeout(Duration.ofSeconds(30));
		this.http = RestClient.builder().baseUrl("http://127.0.0.1:" + this.port).requestFactory(requestFactory).build();
	}

	@Test
	void locksEndpointNeedsCredentials() {
		assertThat(status(HttpMethod.GET, "/actuator/zklocks", null)).isEqualTo(HttpStatus.UNAUTHORIZED);
		assertThat(status(HttpMethod.GET, "/actuator/zklocks/stock/apple", null)).isEqualTo(HttpStatus.UNAUTHORIZED);
		assertThat(status(HttpMethod.DELETE, "/actuator/zklocks/stock/apple", null)).isEqualTo(HttpStatus.UNAUTHORIZED);
		assertThat(status(HttpMethod.GET, "/actuator/zklocks", new Credentials("admin", "admin-demo-only")))
			.as("the demo-only default, replaced by a property")
			.isEqualTo(HttpStatus.UNAUTHORIZED);
	}

	@Test
	void operatorReadsTheLocksButCannotRevokeOne() {
		LockHandle held = this.lockTemplate.acquire("/security/operator", LockMode.EXCLUSIVE, Duration.ZERO);
		try {
			assertThat(status(HttpMethod.GET, "/actuator/zklocks", Credentials.OPERATOR)).isEqualTo(HttpStatus.OK);
			assertThat(status(HttpMethod.GET, "/actuator/zklocks/security/operator", Credentials.OPERATOR))
				.isEqualTo(HttpStatus.OK);

			assertThat(status(HttpMethod.DELETE, "/actuator/zklocks/security/operator?force=true", Credentials.OPERATOR))
				.isEqualTo(HttpStatus.FORBIDDEN);
			assertThat(held.state()).isEqualTo(LockState.HELD);
			assertThat(revocationEvents()).extracting((event) -> data(event).get("key"))
				.doesNotContain("/security/operator");
		}
		finally {
			held.release();
		}
	}

	@Test
	void adminRevokesALockAndTheRevocationIsAudited() {
		LockHandle held = this.lockTemplate.acquire("/security/admin", LockMode.EXCLUSIVE, Duration.ZERO);
		long token = held.fencingToken();

		Map<String, Object> revocation = this.http.delete()
			.uri("/actuator/zklocks/security/admin?force=true")
			.headers((headers) -> headers.setBasicAuth("admin", "admin-secret"))
			.retrieve()
			.body(JSON);

		assertThat(revocation).containsEntry("action", "FORCED_DELETE").containsEntry("released", true);
		await().atMost(BOUND).until(() -> held.state() == LockState.LOST);
		held.release();
		assertThat(revocationEvents()).filteredOn((event) -> "/security/admin".equals(data(event).get("key")))
			.singleElement()
			.satisfies((event) -> {
				assertThat(event).containsEntry("principal", "admin");
				assertThat(data(event)).containsEntry("mode", "FORCE")
					.containsEntry("action", "FORCED_DELETE")
					.containsEntry("released", true)
					.extractingByKey("holders")
					.asInstanceOf(LIST)
					.singleElement()
					.asInstanceOf(MAP)
					.containsEntry("kind", "EXCLUSIVE")
					.hasEntrySatisfying("fencingToken",
							(fencingToken) -> assertThat(((Number) fencingToken).longValue()).isEqualTo(token));
			});
	}

	@Test
	void healthIsOpenWithoutDetailsForAnonymousCallers() {
		Map<String, Object> anonymous = this.http.get().uri("/actuator/health").retrieve().body(JSON);
		assertThat(anonymous).containsEntry("status", "UP").doesNotContainKey("components");
		assertThat(status(HttpMethod.GET, "/actuator/health/liveness", null)).isEqualTo(HttpStatus.OK);

		Map<String, Object> operator = this.http.get()
			.uri("/actuator/health")
			.headers((headers) -> headers.setBasicAuth("operator", "operator-secret"))
			.retrieve()
			.body(JSON);
		assertThat(operator).extractingByKey("components").asInstanceOf(MAP).containsKey("zkLock");
	}

	@Test
	void everyOtherEndpointNeedsAdmin() {
		for (String path : List.of("/actuator/metrics", "/actuator/metrics/zk.lock.lost", "/actuator/prometheus", "/actuator/auditevents",
				"/actuator")) {
			assertThat(status(HttpMethod.GET, path, null)).as(path).isEqualTo(HttpStatus.UNAUTHORIZED);
			assertThat(status(HttpMethod.GET, path, Credentials.OPERATOR)).as(path).isEqualTo(HttpStatus.FORBIDDEN);
			assertThat(status(HttpMethod.GET, path, Credentials.ADMIN)).as(path).isEqualTo(HttpStatus.OK);
		}
	}

	@Test
	void businessEndpointsStayOpen() {
		assertThat(status(HttpMethod.PUT, "/api/stock/security-open?quantity=2", null)).isEqualTo(HttpStatus.OK);
		assertThat(status(HttpMethod.POST, "/api/stock/security-open/purchase?quantity=1", null))
			.isEqualTo(HttpStatus.OK);
		assertThat(status(HttpMethod.GET, "/api/stock/security-open", null)).isEqualTo(HttpStatus.OK);
	}

	private HttpStatus status(HttpMethod method, String uri, @Nullable Credentials credentials) {
		return this.http.method(method).uri(uri).headers((headers) -> {
			if (credentials != null) {
				headers.setBasicAuth(credentials.user(), credentials.password());
			}
		}).exchange((request, response) -> HttpStatus.valueOf(response.getStatusCode().value()));
	}

	/** The {@value ZkLocksEndpoint#LOCK_REVOKED} events, as admin reads them at /actuator/auditevents. */
	@SuppressWarnings("unchecked")
	private List<Map<String, Object>> revocationEvents() {
		Map<String, Object> answer = this.http.get()
			.uri("/actuator/auditevents?type={type}", ZkLocksEndpoint.LOCK_REVOKED)
			.headers((headers) -> headers.setBasicAuth("admin", "admin-secret"))
			.retrieve()
			.body(JSON);
		assertThat(answer).isNotNull();
		return (List<Map<String, Object>>) answer.get("events");
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> data(Map<String, Object> event) {
		return (Map<String, Object>) event.get("data");
	}

	record Credentials(String user, String password) {

		static final Credentials OPERATOR = new Credentials("operator", "operator-secret");

		static final Credentials ADMIN = new Credentials("admin", "admin-secret");

	}

}
