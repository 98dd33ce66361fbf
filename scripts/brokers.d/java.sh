# shellcheck shell=bash
# Java for the JVM brokers (Kafka, Artemis, ElasticMQ, Pulsar): Java 17 is on
# the machine; Debian's headless JRE is the fallback.
java_ensure() { apt_ensure java openjdk-17-jre-headless; }

# java_classpath NAME: the classpath string of maven/NAME.pom.xml's jars.
java_classpath() { local f; f=$(maven_classpath "$1") && cat "$f"; }
