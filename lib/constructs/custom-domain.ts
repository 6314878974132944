import { Token } from 'aws-cdk-lib';
import { Certificate, CertificateValidation, type ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { IDistribution } from 'aws-cdk-lib/aws-cloudfront';
import { ARecord, AaaaRecord, HostedZone, type IHostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { CloudFrontTarget } from 'aws-cdk-lib/aws-route53-targets';
import { Construct } from 'constructs';
import { requireRegion } from './region-rule';

/** Props of {@link CustomDomain}. */
export interface CustomDomainProps {
  /** The API's host name, e.g. `api.example.com`. */
  readonly domainName: string;
  /** An ACM certificate covering `domainName`, in us-east-1 (CloudFront reads certificates only there). */
  readonly certificateArn?: string;
  /** The Route 53 zone of `domainName`: a DNS-validated certificate and alias records are made in it. */
  readonly hostedZone?: { readonly hostedZoneId: string; readonly zoneName: string };
}

/**
 * A custom domain for the distribution: a stable base URL (`https://<domainName>/v1`, unchanged if the
 * distribution is ever replaced) and, with its own certificate, TLS 1.2 as the viewer minimum
 * (security policy TLSv1.2_2021; the default `*.cloudfront.net` certificate still allows TLS 1.0).
 *
 * Either bring a certificate (`certificateArn`, us-east-1; create the DNS record yourself, a CNAME to
 * the `DistributionDomainName` output), or a hosted zone: the certificate is then issued and validated
 * through DNS here, which needs the stack in us-east-1 (a CloudFormation rule refuses other regions),
 * and A/AAAA alias records point the name at the distribution.
 */
export class CustomDomain extends Construct {
  readonly domainName: string;
  readonly certificate: ICertificate;
  private readonly zone: IHostedZone | undefined;

  constructor(scope: Construct, id: string, props: CustomDomainProps) {
    super(scope, id);
    this.domainName = props.domainName;
    this.zone = props.hostedZone ? HostedZone.fromHostedZoneAttributes(this, 'Zone', props.hostedZone) : undefined;
    if (props.certificateArn !== undefined) {
      const region = props.certificateArn.split(':')[3];
      if (!Token.isUnresolved(props.certificateArn) && region !== 'us-east-1') {
        throw new Error(`certificateArn must be an ACM certificate in us-east-1 (CloudFront reads certificates only there), got region ${region ?? '?'}`);
      }
      this.certificate = Certificate.fromCertificateArn(this, 'Certificate', props.certificateArn);
    } else if (this.zone !== undefined) {
      requireRegion(
        this,
        'CertificateRegion',
        'us-east-1',
        'A CloudFront certificate must be issued in us-east-1: deploy this stack there, or pass certificateArn of a us-east-1 certificate',
      );
      this.certificate = new Certificate(this, 'Certificate', { domainName: props.domainName, validation: CertificateValidation.fromDns(this.zone) });
    } else {
      throw new Error('a custom domain needs certificateArn or hostedZone');
    }
  }

  /** Points the name at `distribution` (A and AAAA alias records), when the zone is known. */
  addAliasRecords(distribution: IDistribution): void {
    if (this.zone === undefined) return;
    const target = RecordTarget.fromAlias(new CloudFrontTarget(distribution));
    new ARecord(this, 'AliasA', { zone: this.zone, recordName: this.domainName, target });
    new AaaaRecord(this, 'AliasAaaa', { zone: this.zone, recordName: this.domainName, target });
  }
}
