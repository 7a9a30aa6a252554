package io.github.zklock.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.PropertyMapping;

/**
 * Runs zk-lock in a Spring test's application context ({@code @SpringBootTest}) on an in-process
 * ZooKeeper server instead of {@code zk.lock.connect-string}: it sets
 * {@code zk.lock.embedded.enabled=true}, so the server starts before the client, on a free port,
 * and stops when the context is closed. Contexts cached by the Spring TestContext Framework keep
 * their server; each context has its own.
 *
 * <pre class="code">
 * &#64;SpringBootTest
 * &#64;AutoConfigureEmbeddedZooKeeper
 * class OrderServiceTests {
 *
 * 	&#64;Autowired
 * 	OrderService orders; // its &#64;DistributedLock methods lock on the embedded server
 *
 * }
 * </pre>
 *
 * <p>Needs this module, {@code io.github.zklock:zk-lock-test}, on the test class path (it brings
 * the server, {@code org.apache.curator:curator-test}); without it the context fails to start with
 * an explanation. The server is started by {@link EmbeddedZooKeeperAutoConfiguration}, which the
 * annotation imports, so that it also works in a test that lists its auto-configurations. To share
 * one server between several contexts, or with plain Curator clients, use
 * {@link ZooKeeperExtension} instead.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@PropertyMapping("zk.lock.embedded")
@ImportAutoConfiguration(EmbeddedZooKeeperAutoConfiguration.class)
public @interface AutoConfigureEmbeddedZooKeeper {

	/**
	 * Whether to start the embedded server; {@code false} turns this annotation off (for example
	 * in a subclass), leaving {@code zk.lock.connect-string} in charge.
	 * @return whether to use the embedded server
	 */
	boolean enabled() default true;

	/**
	 * Client port of the server; 0, the default, picks a free port and leaves
	 * {@code zk.lock.embedded.port} of the application's configuration in effect.
	 * @return the port, 0 to 65535
	 */
	@PropertyMapping(skip = PropertyMapping.Skip.ON_DEFAULT_VALUE)
	int port() default 0;

}
