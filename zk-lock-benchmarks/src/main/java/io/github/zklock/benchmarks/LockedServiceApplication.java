package io.github.zklock.benchmarks;

import java.util.Map;

import org.apache.curator.framework.CuratorFramework;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.expression.LockPathExpressionEvaluator;

/**
 * A small Spring Boot application (no web server) with the starter's auto-configuration and
 * {@link LockedService}, so that calls go through the {@code @DistributedLock} proxy exactly as in an
 * application.
 */
@Configuration(proxyBeanMethods = false)
@ImportAutoConfiguration({ AopAutoConfiguration.class, ZkLockAutoConfiguration.class })
public class LockedServiceApplication {

	/**
	 * The annotated bean.
	 * @return the service
	 */
	@Bean
	LockedService lockedService() {
		return new LockedService();
	}

	/**
	 * Start the application.
	 * @param connectString the ZooKeeper server, for the auto-configured client
	 * @param rootPath {@code zk.lock.root-path}
	 * @param client a client to use instead of the auto-configured one (for counting requests), or
	 * {@code null}; the caller closes it
	 * @return the running context
	 */
	public static ConfigurableApplicationContext start(String connectString, String rootPath,
			@Nullable CuratorFramework client) {
		return start(connectString, rootPath, client, false);
	}

	/**
	 * Start the application.
	 * @param connectString the ZooKeeper server, for the auto-configured client
	 * @param rootPath {@code zk.lock.root-path}
	 * @param client a client to use instead of the auto-configured one (for counting requests), or
	 * {@code null}; the caller closes it
	 * @param fastPath whether to replace the starter's operation source with the prototype
	 * {@link FastPathLockOperationSource}
	 * @return the running context
	 */
	public static ConfigurableApplicationContext start(String connectString, String rootPath,
			@Nullable CuratorFramework client, boolean fastPath) {
		SpringApplicationBuilder builder = new SpringApplicationBuilder(LockedServiceApplication.class)
			.web(WebApplicationType.NONE)
			.bannerMode(Banner.Mode.OFF)
			.logStartupInfo(false)
			.registerShutdownHook(false)
			.properties(Map.of("zk.lock.connect-string", connectString, "zk.lock.root-path", rootPath));
		if (client != null) {
			builder.initializers((context) -> context.getBeanFactory().registerSingleton("benchmarkCurator", client));
		}
		if (fastPath) {
			builder.initializers((context) -> context.getBeanFactory()
				.registerSingleton("fastPathLockOperationSource", new FastPathLockOperationSource(
						new LockPathExpressionEvaluator(context.getBeanFactory()))));
		}
		return builder.run();
	}

}
