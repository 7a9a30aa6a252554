package io.github.zklock.benchmarks.run;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.jvm.JvmMetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.logging.logback.LogbackMetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.system.SystemMetricsAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.autoconfigure.ZkLockAutoConfiguration;
import io.github.zklock.autoconfigure.actuate.ZkLockMetricsAutoConfiguration;

/**
 * The application of a {@link ScaleWorker}: the starter's auto-configuration with Boot's meter
 * registry (the simple one, as without an exporter), its JVM, system and logging meters, and its
 * observation registry, so that the lock's timers, gauge and counters exist as in an application
 * with Actuator; plus {@link Orders}, whose methods lock one order under {@code @DistributedLock},
 * and an {@link ObservationTags} handler that collects the low-cardinality tag values of the lock's
 * observations.
 */
@Configuration(proxyBeanMethods = false)
@ImportAutoConfiguration({ AopAutoConfiguration.class, ZkLockAutoConfiguration.class,
		ZkLockMetricsAutoConfiguration.class, MetricsAutoConfiguration.class,
		CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
		JvmMetricsAutoConfiguration.class, SystemMetricsAutoConfiguration.class,
		LogbackMetricsAutoConfiguration.class, ObservationAutoConfiguration.class })
public class ScaleApplication {

	@Bean
	Orders orders() {
		return new Orders();
	}

	@Bean
	ObservationTags observationTags() {
		return new ObservationTags();
	}

	/**
	 * Start the application.
	 * @param properties its properties ({@code zk.lock.*})
	 * @return the running context
	 */
	static ConfigurableApplicationContext start(Map<String, Object> properties) {
		return new SpringApplicationBuilder(ScaleApplication.class).web(WebApplicationType.NONE)
			.bannerMode(Banner.Mode.OFF)
			.logStartupInfo(false)
			.registerShutdownHook(false)
			.properties(properties)
			.run();
	}

	/** The locked methods: one order of the flat layout, one of the deep layout. Empty bodies. */
	public static class Orders {

		/**
		 * Lock {@code /orders/<order>}.
		 * @param order the order number
		 */
		@DistributedLock(path = "/orders/#{#order}")
		public void flat(long order) {
		}

		/**
		 * Lock {@code /tenant/<tenant>/order/<order>}.
		 * @param tenant the tenant number
		 * @param order the order number
		 */
		@DistributedLock(path = "/tenant/#{#tenant}/order/#{#order}")
		public void deep(long tenant, long order) {
		}

	}

	/**
	 * Collects the distinct low-cardinality {@code key=value} pairs of the {@code zk.lock.*}
	 * observations when they stop (at most {@value #LIMIT}, so that a per-key tag cannot fill the
	 * heap it measures). High-cardinality values (the {@code path} of traces) are not kept.
	 */
	static final class ObservationTags implements ObservationHandler<Observation.Context> {

		static final int LIMIT = 100_000;

		private final Set<String> values = ConcurrentHashMap.newKeySet();

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

		@Override
		public void onStop(Observation.Context context) {
			String name = context.getName();
			if (name != null && name.startsWith("zk.lock") && this.values.size() < LIMIT) {
				for (KeyValue keyValue : context.getLowCardinalityKeyValues()) {
					this.values.add(name + " " + keyValue.getKey() + "=" + keyValue.getValue());
				}
			}
		}

		/** The pairs seen so far, each as {@code <observation> <key>=<value>}. */
		Set<String> values() {
			return this.values;
		}

	}

}
