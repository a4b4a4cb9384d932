#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cblas.h>
#include "numoracle/numoracle.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(int argc,char**argv){
  long M=atol(argv[1]),N=4096,K=4096; nmo_err e; nmo_plan p; const nmo_op*op=nmo_op_find("matmul");
  nmo_plan_default(&p,NMO_BF16);
  int64_t sh[3]={M,N,K}; nmo_case c; if(nmo_case_init(&c,op,&p,3,sh,&e)){printf("%s\n",e.msg);return 2;}
  nmo_case_fill(&c,NMO_FAM_GAUSSIAN,1);
  double*a=malloc(8*M*K),*b=malloc(8*K*N),*cc=malloc(8*M*N);
  for(long i=0;i<M*K;i++)a[i]=nmo_tensor_get(&c.in[0],i);
  for(long i=0;i<K*N;i++)b[i]=nmo_tensor_get(&c.in[1],i);
  cblas_dgemm(CblasRowMajor,CblasNoTrans,CblasNoTrans,M,N,K,1,a,K,b,N,0,cc,N);
  nmo_tensor o=c.out[0]; o.data=NULL;o.own=0; nmo_tensor_alloc(&o,&e);
  for(long i=0;i<M*N;i++) nmo_tensor_set(&o,i,cc[i]);
  nmo_report r; nmo_check_opts opt={.mode=NMO_MODE_ESCALATE};
  double t0=now(); if(nmo_check(&r,&c,&o,&opt,&e)){printf("%s\n",e.msg);return 2;} double t1=now();
  printf("cpu oracle matmul %ldx4096x4096 bf16: %.3f s (report %.3f s) %s pass=%lld fail=%lld inc=%lld\n",M,t1-t0,r.seconds,nmo_verdict_name(r.verdict),(long long)r.n_pass,(long long)r.n_fail,(long long)r.n_inconc);
  return 0;}
