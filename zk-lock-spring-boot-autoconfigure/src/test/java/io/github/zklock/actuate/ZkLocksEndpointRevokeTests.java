package io.github.zklock.actuate;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.InvocationContext;
import org.springframework.boot.actuate.endpoint.OperationFilter;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.invoke.ParameterValueMapper;
import org.springframework.boot.actuate.endpoint.web.EndpointMediaTypes;
import org.springframework.boot.actuate.endpoint.web.WebEndpointHttpMethod;
import org.springframework.boot.actuate.endpoint.web.WebOperation;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpointDiscoverer;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionManagerCustomizationAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.convert.support.ConfigurableConversionService;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.autoconfigure.actuate.ZkLocksEndpointAutoConfiguration;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.Revocation;
import io.github.zklock.curator.RevocationAction;
import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The {@code zklocks} endpoint's write operation on a real ZooKeeper: revoking a lock held by a
 * {@code @Transactional @DistributedLock} method, through Curator's revocation protocol (the
 * holder gives the lock up, its grant goes LOST, the commit guard rolls its transaction back) and
 * with {@code force=true} (the holder's znode deleted, the same outcome once the holder notices);
 * a free key is reported not held; the operation as Boot's web layer maps it
 * ({@code DELETE /actuator/zklocks/{key}?force=true}, none with
 * {@code management.endpoint.zklocks.access=read-only}); and the per-key view's holder, owner
 * process, waiters and chain length. The holder and the revoker are one application here: revocation goes through
 * ZooKeeper either way ({@code RevocationTests} in core covers two applications).
 */
class ZkLocksEndpointRevokeTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	private static final Duration BOUND = Duration.ofSeconds(10);

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class,
				TransactionManagerCustomizationAutoConfiguration.class, TransactionAutoConfiguration.class,
				AopAutoConfiguration.class, ZkLockAutoConfiguration.class, ZkLocksEndpointAutoConfiguration.class))
		.withUserConfiguration(LedgerConfiguration.class)
		.withPropertyValues("zk.lock.connect-string=" + zooKeeper.getConnectString(),
				"zk.lock.revocation-check-interval=100ms", "management.endpoints.web.exposure.include=zklocks");

	@Test
	void revocationMakesTheHolderGiveUpAndRollsItsTransactionBack() {
		this.contextRunner.run((context) -> revokeWhileWriting(context, "requested", false,
				RevocationAction.REVOCATION_REQUESTED));
	}

	@Test
	void forcedRevocationDeletesTheHolderZnodeAndRollsItsTransactionBack() {
		this.contextRunner.run((context) -> revokeWhileWriting(context, "forced", true,
				RevocationAction.FORCED_DELETE));
	}

	@Test
	void freeKeyIsReportedNotHeld() {
		this.contextRunner.run((context) -> {
			Revocation revocation = context.getBean(ZkLocksEndpoint.class)
				.revoke(new String[] { "nobody", "holds" }, null, null);
			assertThat(revocation.action()).isEqualTo(RevocationAction.NOT_HELD);
			assertThat(revocation.path()).isEqualTo("/locks/nobody/holds");
		});
	}

	@Test
	void revocationCheckIntervalIsAppliedToTheRegistry() {
		this.contextRunner.run((context) -> assertThat(
				context.getBean(CuratorLockRegistry.class).getRevocationCheckInterval())
			.isEqualTo(Duration.ofMillis(100)));
		this.contextRunner.withPropertyValues("zk.lock.revocation-check-interval=-1s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("zk.lock.revocation-check-interval must be 0"));
	}

	@Test
	void keyViewShowsHolderOwnerWaitersAndChainLength() {
		this.contextRunner.run((context) -> {
			ZkLocksEndpoint endpoint = context.getBean(ZkLocksEndpoint.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			LockHandle held = template.acquire("/view/1", LockMode.WRITE, Duration.ZERO);
			ExecutorService threads = Executors.newFixedThreadPool(2);
			// A reader queues a znode; a writer waits for the holder's turn locally (hand-off), without one.
			CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> template.execute("/view/1",
					LockMode.READ, BOUND, (handle) -> null), threads);
			CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> template.execute("/view/1",
					LockMode.WRITE, BOUND, (handle) -> null), threads);
			await().atMost(BOUND).until(() -> endpoint.participants("view", "1").participants().size() == 2
					&& endpoint.locks().waiting().size() == 2);

			ZkLocksEndpoint.PathParticipants view = endpoint.participants("view", "1");
			assertThat(view.waiters()).isEqualTo(2);
			assertThat(view.localWaiters()).isEqualTo(2);
			assertThat(view.participants().get(0)).satisfies((holder) -> {
				assertThat(holder.holder()).isTrue();
				assertThat(holder.pid()).isEqualTo(ProcessHandle.current().pid());
				assertThat(holder.host()).isEqualTo(endpoint.locks().host());
				assertThat(holder.fencingToken()).isEqualTo(held.fencingToken());
				assertThat(holder.chainLength()).isOne();
			});
			assertThat(view.participants().get(1).holder()).isFalse();
			assertThat(endpoint.locks().pid()).isEqualTo(ProcessHandle.current().pid());

			held.release();
			reader.get(BOUND.toSeconds(), TimeUnit.SECONDS);
			writer.get(BOUND.toSeconds(), TimeUnit.SECONDS);
			threads.shutdown();
		});
	}

	@Test
	void deleteIsMappedOnTheKeyWithAForceParameterAndRefusedWhenAccessIsReadOnly() {
		ApplicationContextRunner endpoints = this.contextRunner
			.withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class));
		endpoints.run((context) -> {
			WebOperation delete = webOperations(context).stream()
				.filter((operation) -> operation.getRequestPredicate().getHttpMethod() == WebEndpointHttpMethod.DELETE)
				.findFirst()
				.orElseThrow();
			assertThat(delete.getRequestPredicate().getPath()).isEqualTo("zklocks/{*key}");
			LockHandle held = context.getBean(LockTemplate.class).acquire("/web/1", LockMode.EXCLUSIVE, Duration.ZERO);

			// As the web layer passes DELETE /actuator/zklocks/web/1?force=true.
			Object revocation = delete.invoke(new InvocationContext(SecurityContext.NONE,
					Map.of("key", new String[] { "web", "1" }, "force", "true")));

			assertThat(revocation).isInstanceOfSatisfying(Revocation.class, (revoked) -> {
				assertThat(revoked.action()).isEqualTo(RevocationAction.FORCED_DELETE);
				assertThat(revoked.path()).isEqualTo("/locks/web/1");
				assertThat(revoked.released()).isTrue();
			});
			await().atMost(BOUND).until(() -> held.state() == LockState.LOST);
			held.release();
		});
		// As SpringApplication does, so that the value is read as in the documentation (read-only).
		endpoints.withInitializer((context) -> context.getEnvironment()
			.setConversionService((ConfigurableConversionService) ApplicationConversionService.getSharedInstance()))
			.withPropertyValues("management.endpoint.zklocks.access=read-only")
			.run((context) -> assertThat(webOperations(context))
				.extracting((operation) -> operation.getRequestPredicate().getHttpMethod())
				.containsOnly(WebEndpointHttpMethod.GET)
				.hasSize(2));
	}

	/** The operations of the zklocks endpoint as Boot's web layer discovers and filters them. */
	private static List<WebOperation> webOperations(ApplicationContext context) {
		WebEndpointDiscoverer discoverer = new WebEndpointDiscoverer(context,
				context.getBean(ParameterValueMapper.class), EndpointMediaTypes.DEFAULT, List.of(), List.of(),
				List.of(), List.of(), List.of(OperationFilter.byAccess(context.getBean(EndpointAccessResolver.class))));
		return discoverer.getEndpoints()
			.stream()
			.filter((endpoint) -> endpoint.getEndpointId().equals(EndpointId.of("zklocks")))
			.flatMap((endpoint) -> endpoint.getOperations().stream())
			.toList();
	}

	private static void revokeWhileWriting(AssertableApplicationContext context, String id, boolean force,
			RevocationAction action) throws Exception {
		JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
		jdbc.execute("create table if not exists entries (id varchar(64) primary key)");
		Ledger ledger = context.getBean(Ledger.class);
		ZkLocksEndpoint endpoint = context.getBean(ZkLocksEndpoint.class);
		CompletableFuture<Void> writing = CompletableFuture.runAsync(() -> ledger.writeAndWait(id));
		assertThat(ledger.awaitInside()).isTrue();

		Revocation revocation = endpoint.revoke(new String[] { "ledger" }, force, null);

		assertThat(revocation.action()).isEqualTo(action);
		assertThat(revocation.released()).isTrue();
		assertThat(revocation.holders()).singleElement()
			.satisfies((holder) -> assertThat(holder.kind()).isEqualTo("EXCLUSIVE"));
		await().atMost(BOUND).until(() -> ledger.handle().state() != LockState.HELD);
		ledger.proceed();
		assertThatExceptionOfType(ExecutionException.class)
			.isThrownBy(() -> writing.get(BOUND.toSeconds(), TimeUnit.SECONDS))
			.havingCause()
			.isInstanceOf(LockLostException.class);
		assertThat(jdbc.queryForObject("select count(*) from entries where id = ?", Integer.class, id)).isZero();
		assertThat(endpoint.locks().held()).isEmpty();
		assertThat(endpoint.participants("ledger").participants()).isEmpty();
	}

	@Configuration(proxyBeanMethods = false)
	static class LedgerConfiguration {

		@Bean
		Ledger ledger(JdbcTemplate jdbcTemplate) {
			return new Ledger(jdbcTemplate);
		}

	}

	static class Ledger {

		final CountDownLatch inside = new CountDownLatch(1);

		final CountDownLatch proceed = new CountDownLatch(1);

		volatile LockHandle handle;

		private final JdbcTemplate jdbcTemplate;

		Ledger(JdbcTemplate jdbcTemplate) {
			this.jdbcTemplate = jdbcTemplate;
		}

		// Through methods: the test holds the CGLIB proxy, whose own fields are not the target's.

		public boolean awaitInside() throws InterruptedException {
			return this.inside.await(BOUND.toSeconds(), TimeUnit.SECONDS);
		}

		public LockHandle handle() {
			return this.handle;
		}

		public void proceed() {
			this.proceed.countDown();
		}

		/** Writes under the lock, then waits (bounded) until the test has revoked the lock. */
		@DistributedLock(path = "/ledger")
		@Transactional
		public void writeAndWait(String id) {
			this.jdbcTemplate.update("insert into entries (id) values (?)", id);
			this.handle = LockContext.require();
			this.inside.countDown();
			try {
				this.proceed.await(BOUND.toSeconds(), TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

}
