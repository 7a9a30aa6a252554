package io.github.zklock.sample.chaos;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;

/**
 * Turns the fault campaign's workloads on with the Spring profile {@code chaos}: binds
 * {@link ChaosProperties}; the profile's {@code application-chaos.yml} adds the workloads' tables
 * to the schema the application initialises and runs the scheduled report every second. Every
 * other bean of this package carries the same {@code @Profile}, so that without the profile the
 * application has none of them.
 *
 * <p>The workloads' fences ({@link io.github.zklock.transaction.JdbcLockFence}) are created by
 * their services rather than declared as beans: the stock service takes the application's one
 * fence bean by type.
 */
@Configuration(proxyBeanMethods = false)
@Profile(ChaosConfiguration.PROFILE)
@EnableConfigurationProperties(ChaosProperties.class)
public class ChaosConfiguration {

	/** The Spring profile that turns the workloads on. */
	public static final String PROFILE = "chaos";

}
