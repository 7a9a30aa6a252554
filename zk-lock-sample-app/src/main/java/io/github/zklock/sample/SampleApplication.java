package io.github.zklock.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * Entry point of the zk-lock sample: a flash-sale stock REST service whose purchases are
 * serialized per SKU by a ZooKeeper lock, across every instance that shares its ZooKeeper and its
 * database. By default it runs on an embedded ZooKeeper and an in-memory H2 database (see
 * {@code application.yml}); {@code ./demo.sh} runs several instances on one ZooKeeper server and
 * one H2 file database.
 */
@SpringBootApplication
@EnableScheduling
@EnableConfigurationProperties(SampleProperties.class)
public class SampleApplication {

	/**
	 * Start the application.
	 * @param args command line arguments, for example {@code --server.port=18080}
	 */
	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
