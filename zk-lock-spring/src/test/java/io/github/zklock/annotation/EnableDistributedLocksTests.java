package io.github.zklock.annotation;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.apache.curator.framework.CuratorFramework;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.aop.Advisor;
import org.springframework.aop.aspectj.annotation.AnnotationAwareAspectJAutoProxyCreator;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.autoproxy.InfrastructureAdvisorAutoProxyCreator;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ConfigurationClassPostProcessor;
import org.springframework.context.annotation.EnableAspectJAutoProxy;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.env.MapPropertySource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.LockAcquisitionException;
import io.github.zklock.LockContext;
import io.github.zklock.LockTemplate;
import io.github.zklock.aop.DistributedLockAdvisor;
import io.github.zklock.aop.DistributedLockConfiguration;
import io.github.zklock.aop.LockOperation;
import io.github.zklock.aop.LockOperationSource;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.expression.LockPathExpressionEvaluator;
import io.github.zklock.expression.LockPathTemplate;
import io.github.zklock.test.ZooKeeperExtension;
import io.github.zklock.transaction.LockCommitGuard;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * {@link EnableDistributedLocks @EnableDistributedLocks} on a plain
 * {@link AnnotationConfigApplicationContext}, without Spring Boot: annotated methods are locked
 * (between two contexts on one ZooKeeper server, as two processes, and between threads of one);
 * one advisor, ordered by the attribute or by {@code zk.lock.aspect-order}; class or interface
 * proxies; malformed declarations fail the refresh; the template is looked up on the first locked
 * call; the commit guard is added once to a transaction manager bean; an AspectJ auto-proxy
 * creator the application already has is kept and applies the advisor.
 */
class EnableDistributedLocksTests {

	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	@Test
	void annotatedMethodsOfTwoApplicationsExcludeEachOther() throws Exception {
		try (AnnotationConfigApplicationContext first = new AnnotationConfigApplicationContext(LedgerApplication.class,
				LockBeans.class);
				AnnotationConfigApplicationContext second = new AnnotationConfigApplicationContext(
						LedgerApplication.class, LockBeans.class)) {
			Ledger firstLedger = first.getBean(Ledger.class);
			Ledger secondLedger = second.getBean(Ledger.class);
			CountDownLatch inside = new CountDownLatch(1);
			CountDownLatch leave = new CountDownLatch(1);
			ExecutorService executor = Executors.newFixedThreadPool(2);
			try {
				Future<String> holder = executor.submit(() -> firstLedger.hold(inside, leave));
				assertThat(inside.await(10, SECONDS)).as("first application holds the lock").isTrue();
				// The other application...
				assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(secondLedger::tryOnce)
					.withMessageContaining("/locks/ledger");
				// ...and another thread of the same application are kept out.
				Future<?> sameApplication = executor.submit(firstLedger::tryOnce);
				assertThatExceptionOfType(Exception.class).isThrownBy(() -> sameApplication.get(10, SECONDS))
					.withCauseInstanceOf(LockAcquisitionException.class);
				assertThat(firstLedger.tryOnceInvocations()).isZero();
				assertThat(secondLedger.tryOnceInvocations()).isZero();

				leave.countDown();
				assertThat(holder.get(10, SECONDS)).isEqualTo("/locks/ledger");
				assertTimeoutPreemptively(Duration.ofSeconds(10), secondLedger::tryOnce);
				assertThat(secondLedger.tryOnceInvocations()).isOne();
			}
			finally {
				leave.countDown();
				executor.shutdownNow();
			}
		}
	}

	@Test
	void advisorIsRegisteredOnceWithTheDefaultOrder() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				DefaultOrder.class)) {
			assertThat(context.getBeansOfType(DistributedLockAdvisor.class).values()).singleElement()
				.satisfies((advisor) -> assertThat(advisor.getOrder()).isEqualTo(EnableDistributedLocks.DEFAULT_ORDER));
			assertThat(context.getBeansOfType(DistributedLockConfiguration.class)).hasSize(1);
		}
	}

	@Test
	void annotationOnTwoConfigurationClassesStillRegistersOneAdvisor() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				DefaultOrder.class, CustomOrder.class)) {
			assertThat(context.getBeansOfType(DistributedLockAdvisor.class)).hasSize(1);
		}
	}

	@Test
	void applicationsOwnOperationSourceTakesThePlaceOfTheDefault() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				LedgerApplication.class, LockBeans.class, TenantKeys.class)) {
			TenantOperationSource own = context.getBean(TenantOperationSource.class);
			// The validator, at start-up, and the advice, per call, both use it.
			assertThat(own.builtFor()).contains("hold", "tryOnce", "currentPath");
			assertThat(context.getBean(Ledger.class).currentPath()).isEqualTo("/locks/tenant-7/ledger");
			assertThat(own.resolved()).isOne();
		}
	}

	@Test
	void orderAttributeOrdersTheAdvisor() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				CustomOrder.class)) {
			assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).isEqualTo(42);
		}
	}

	@ParameterizedTest
	@ValueSource(classes = { DefaultOrder.class, CustomOrder.class })
	void aspectOrderPropertyWinsOverTheAttribute(Class<?> configuration) {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("test", Map.of("zk.lock.aspect-order", "7")));
			context.register(configuration);
			context.refresh();
			assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).isEqualTo(7);
		}
	}

	@Test
	void proxyTargetClassGivesAClassProxyOfABeanWithAnInterface() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				ClassProxies.class)) {
			Greeter greeter = context.getBean(Greeter.class);
			assertThat(AopUtils.isCglibProxy(greeter)).isTrue();
			assertThat(greeter).isInstanceOf(LockedGreeter.class);
			assertThat(advisors(greeter)).hasAtLeastOneElementOfType(DistributedLockAdvisor.class);
		}
	}

	@Test
	void interfaceProxiesByDefault() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				InterfaceProxies.class)) {
			Greeter greeter = context.getBean(Greeter.class);
			assertThat(AopUtils.isJdkDynamicProxy(greeter)).isTrue();
			assertThat(greeter).isNotInstanceOf(LockedGreeter.class);
			assertThat(advisors(greeter)).hasAtLeastOneElementOfType(DistributedLockAdvisor.class);
		}
	}

	@Test
	void malformedTemplateFailsTheRefreshNamingTheMethod() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.register(DefaultOrder.class);
			context.registerBean(Malformed.class);
			Throwable failure = catchThrowable(context::refresh);
			assertThat(failure).isInstanceOf(BeanCreationException.class);
			assertThat(causeOfType(failure, InvalidLockPathException.class)).hasMessageContaining("Malformed.lock")
				.hasMessageContaining("/orders/#{#id");
		}
	}

	@Test
	void lockTemplateIsLookedUpOnTheFirstLockedCall() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				LedgerApplication.class, LazyLockBeans.class)) {
			// Started with the advice in place, and no ZooKeeper client yet.
			Ledger ledger = context.getBean(Ledger.class);
			assertThat(AopUtils.isAopProxy(ledger)).isTrue();
			assertThat(context.getBeanFactory().containsSingleton("lockTemplate")).isFalse();
			assertThat(context.getBeanFactory().containsSingleton("curatorFramework")).isFalse();

			assertThat(ledger.currentPath()).isEqualTo("/locks/ledger");
			assertThat(context.getBeanFactory().containsSingleton("lockTemplate")).isTrue();
			assertThat(context.getBeanFactory().containsSingleton("curatorFramework")).isTrue();
		}
	}

	@Test
	void contextWithoutLockTemplateStartsAndTheFirstLockedCallSaysWhatIsMissing() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				LedgerApplication.class)) {
			Ledger ledger = context.getBean(Ledger.class);
			assertThatExceptionOfType(NoSuchBeanDefinitionException.class).isThrownBy(ledger::currentPath)
				.withMessageContaining(LockTemplate.class.getName());
		}
	}

	@Test
	void commitGuardIsAddedOnceToATransactionManagerBean() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				DefaultOrder.class, PlainTransactionManager.class)) {
			assertThat(context.getBean(DataSourceTransactionManager.class).getTransactionExecutionListeners())
				.filteredOn(LockCommitGuard.class::isInstance)
				.hasSize(1);
		}
	}

	@Test
	void commitGuardAddedByTheUserIsNotAddedAgain() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				DefaultOrder.class, GuardedTransactionManager.class)) {
			LockCommitGuard usersGuard = context.getBean(GuardedTransactionManager.class).guard;
			assertThat(context.getBean(DataSourceTransactionManager.class).getTransactionExecutionListeners())
				.filteredOn(LockCommitGuard.class::isInstance)
				.containsExactly(usersGuard);
		}
	}

	@Test
	void ownAutoProxyCreatorIsRegisteredWhenTheApplicationHasNone() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				DefaultOrder.class)) {
			assertThat(context.getBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME))
				.isExactlyInstanceOf(InfrastructureAdvisorAutoProxyCreator.class);
		}
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void existingAspectJAutoProxyCreatorIsKept(boolean aspectJFirst) {
		// The bean definitions, in both registration orders: the AspectJ-aware creator wins.
		DefaultListableBeanFactory registry = new DefaultListableBeanFactory();
		for (Class<?> configuration : aspectJApplication(aspectJFirst)) {
			registry.registerBeanDefinition(configuration.getName(), new RootBeanDefinition(configuration));
		}
		new ConfigurationClassPostProcessor().postProcessBeanDefinitionRegistry(registry);
		assertThat(registry.getBeanDefinition(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME).getBeanClassName())
			.isEqualTo(AnnotationAwareAspectJAutoProxyCreator.class.getName());
	}

	@ParameterizedTest
	@ValueSource(booleans = { true, false })
	void existingAspectJAutoProxyCreatorAppliesTheAdvisor(boolean aspectJFirst) {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				aspectJApplication(aspectJFirst))) {
			assertThat(context.getBean(AopConfigUtils.AUTO_PROXY_CREATOR_BEAN_NAME))
				.isInstanceOf(AnnotationAwareAspectJAutoProxyCreator.class);
			Ledger ledger = context.getBean(Ledger.class);
			assertThat(advisors(ledger)).hasAtLeastOneElementOfType(DistributedLockAdvisor.class);
			assertThat(ledger.currentPath()).isEqualTo("/locks/ledger");
		}
	}

	private static Class<?>[] aspectJApplication(boolean aspectJFirst) {
		return aspectJFirst ? new Class<?>[] { AspectJApplication.class, LedgerApplication.class, LockBeans.class }
				: new Class<?>[] { LedgerApplication.class, LockBeans.class, AspectJApplication.class };
	}

	/** The first {@code type} in the cause chain of {@code failure}. */
	private static <T extends Throwable> T causeOfType(Throwable failure, Class<T> type) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (type.isInstance(cause)) {
				return type.cast(cause);
			}
		}
		throw new AssertionError("No " + type.getName() + " in the causes of " + failure, failure);
	}

	private static Advisor[] advisors(Object bean) {
		assertThat(bean).isInstanceOf(Advised.class);
		return ((Advised) bean).getAdvisors();
	}

	/**
	 * A plain Spring application's lock beans: a client of the test server, the registry and
	 * the template.
	 */
	@Configuration(proxyBeanMethods = false)
	static class LockBeans {

		@Bean
		CuratorFramework curatorFramework() throws InterruptedException {
			return zooKeeper.newClient();
		}

		@Bean(destroyMethod = "close")
		CuratorLockRegistry lockRegistry(CuratorFramework client) {
			return new CuratorLockRegistry(client, "/locks", 10_000);
		}

		@Bean
		LockTemplate lockTemplate(CuratorLockRegistry lockRegistry) {
			return new LockTemplate(lockRegistry, Duration.ofSeconds(10));
		}

	}

	/** The same beans, created only when first needed. */
	@Configuration(proxyBeanMethods = false)
	@Lazy
	static class LazyLockBeans extends LockBeans {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class LedgerApplication {

		@Bean
		Ledger ledger() {
			return new Ledger();
		}

	}

	/** An application that resolves keys its own way: below its tenant. */
	@Configuration(proxyBeanMethods = false)
	static class TenantKeys {

		@Bean
		TenantOperationSource tenantOperationSource(BeanFactory beanFactory) {
			return new TenantOperationSource(new LockPathExpressionEvaluator(beanFactory));
		}

	}

	static class TenantOperationSource extends LockOperationSource {

		private final Set<String> builtFor = ConcurrentHashMap.newKeySet();

		private final AtomicInteger resolved = new AtomicInteger();

		TenantOperationSource(LockPathExpressionEvaluator evaluator) {
			super(evaluator);
		}

		@Override
		public @Nullable LockOperation getOperation(Method method, @Nullable Class<?> targetClass) {
			LockOperation operation = super.getOperation(method, targetClass);
			if (operation != null) {
				this.builtFor.add(method.getName());
			}
			return operation;
		}

		@Override
		public String resolvePath(LockOperation operation, LockPathTemplate path, @Nullable Object[] args,
				@Nullable Object target) {
			this.resolved.incrementAndGet();
			return "/tenant-7" + super.resolvePath(operation, path, args, target);
		}

		Set<String> builtFor() {
			return this.builtFor;
		}

		int resolved() {
			return this.resolved.get();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAspectJAutoProxy
	static class AspectJApplication {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class DefaultOrder {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks(order = 42)
	static class CustomOrder {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks(proxyTargetClass = true)
	static class ClassProxies {

		@Bean
		LockedGreeter greeter() {
			return new LockedGreeter();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class InterfaceProxies {

		@Bean
		LockedGreeter greeter() {
			return new LockedGreeter();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PlainTransactionManager {

		@Bean(destroyMethod = "shutdown")
		EmbeddedDatabase dataSource() {
			return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
		}

		@Bean
		DataSourceTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class GuardedTransactionManager {

		final LockCommitGuard guard = new LockCommitGuard();

		@Bean(destroyMethod = "shutdown")
		EmbeddedDatabase dataSource() {
			return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
		}

		@Bean
		DataSourceTransactionManager transactionManager(DataSource dataSource) {
			DataSourceTransactionManager transactionManager = new DataSourceTransactionManager(dataSource);
			transactionManager.addListener(this.guard);
			return transactionManager;
		}

	}

	static class Ledger {

		private final AtomicInteger tryOnceInvocations = new AtomicInteger();

		@DistributedLock(path = "/ledger")
		public String hold(CountDownLatch inside, CountDownLatch leave) throws InterruptedException {
			inside.countDown();
			if (!leave.await(10, SECONDS)) {
				throw new IllegalStateException("Not told to leave within 10 s");
			}
			return LockContext.require().path();
		}

		@DistributedLock(path = "/ledger", waitTime = "0")
		public void tryOnce() {
			this.tryOnceInvocations.incrementAndGet();
		}

		@DistributedLock(path = "/ledger")
		public String currentPath() {
			return LockContext.require().path();
		}

		public int tryOnceInvocations() {
			return this.tryOnceInvocations.get();
		}

	}

	interface Greeter {

		String greet(String name);

	}

	static class LockedGreeter implements Greeter {

		@Override
		@DistributedLock(path = "/greetings/#{#name}")
		public String greet(String name) {
			return "Hello " + name;
		}

	}

	static class Malformed {

		@DistributedLock(path = "/orders/#{#id")
		public void lock(String id) {
		}

	}

}
