package io.github.zklock.actuate;

import java.security.Principal;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.actuate.audit.AuditEvent;
import org.springframework.boot.actuate.audit.AuditEventRepository;
import org.springframework.boot.actuate.audit.InMemoryAuditEventRepository;
import org.springframework.boot.actuate.audit.listener.AuditListener;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.autoconfigure.actuate.ZkLocksEndpointAutoConfiguration;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Each revocation through the {@code zklocks} endpoint, on a real ZooKeeper, leaves one audit
 * event of type {@code ZK_LOCK_REVOKED} in the application's {@link AuditEventRepository}, through
 * the endpoint's auto-configured publisher and Actuator's {@link AuditListener} (declared here as
 * Boot's {@code AuditAutoConfiguration} declares it, whose security listeners need Spring Security
 * on the class path), and one WARN line:
 * the caller, the key, the mode and the holders it ended; a free key's has no holder, and a caller
 * without authentication is named {@code anonymous}.
 */
@ExtendWith(OutputCaptureExtension.class)
class ZkLocksEndpointAuditTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration BOUND = Duration.ofSeconds(10);

	private static final Principal ADMIN = () -> "admin";

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, ZkLockAutoConfiguration.class,
				ZkLocksEndpointAutoConfiguration.class))
		.withUserConfiguration(AuditRepositoryConfiguration.class)
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(),
				"management.endpoints.web.exposure.include=zklocks");

	@Test
	void revocationOfAHeldLockIsAuditedWithThePrincipalKeyAndEndedHolder(CapturedOutput output) {
		this.contextRunner.run((context) -> {
			LockHandle held = context.getBean(LockTemplate.class).acquire("/audit/held", LockMode.EXCLUSIVE,
					Duration.ZERO);

			context.getBean(ZkLocksEndpoint.class).revoke(new String[] { "audit", "held" }, true, ADMIN);

			List<AuditEvent> events = context.getBean(AuditEventRepository.class)
				.find(null, null, ZkLocksEndpoint.LOCK_REVOKED);
			assertThat(events).singleElement().satisfies((event) -> {
				assertThat(event.getPrincipal()).isEqualTo("admin");
				assertThat(event.getData()).containsEntry("key", "/audit/held")
					.containsEntry("path", "/locks/audit/held")
					.containsEntry("mode", "FORCE")
					.containsEntry("action", "FORCED_DELETE")
					.containsEntry("released", true);
				assertThat(event.getData().get("holders")).asInstanceOf(InstanceOfAssertFactories.LIST)
					.singleElement()
					.isInstanceOfSatisfying(Map.class, (holder) -> {
						assertThat(holder.get("fencingToken")).isEqualTo(held.fencingToken());
						assertThat(holder.get("kind")).isEqualTo("EXCLUSIVE");
						assertThat((String) holder.get("owner")).startsWith(ProcessHandle.current().pid() + "@");
						assertThat((String) holder.get("path")).startsWith("/locks/audit/held/");
					});
			});
			assertThat(output).contains("Lock '/locks/audit/held' (key '/audit/held') revoked by admin (FORCE): FORCED_DELETE");
			await().atMost(BOUND).until(() -> held.state() == LockState.LOST);
			held.release();
		});
	}

	@Test
	void revocationOfAFreeKeyIsAuditedWithoutHoldersAndAnAnonymousCaller() {
		this.contextRunner.run((context) -> {
			context.getBean(ZkLocksEndpoint.class).revoke(new String[] { "audit", "free" }, null, null);

			assertThat(context.getBean(AuditEventRepository.class).find(null, null, ZkLocksEndpoint.LOCK_REVOKED))
				.singleElement()
				.satisfies((event) -> {
					assertThat(event.getPrincipal()).isEqualTo(ZkLocksEndpoint.ANONYMOUS);
					assertThat(event.getData()).containsEntry("key", "/audit/free")
						.containsEntry("mode", "REQUEST")
						.containsEntry("action", "NOT_HELD")
						.containsEntry("holders", List.of())
						.containsEntry("released", true);
				});
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class AuditRepositoryConfiguration {

		@Bean
		InMemoryAuditEventRepository auditEventRepository() {
			return new InMemoryAuditEventRepository();
		}

		@Bean
		AuditListener auditListener(AuditEventRepository auditEventRepository) {
			return new AuditListener(auditEventRepository);
		}

	}

}
